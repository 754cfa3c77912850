import Testing
@testable import Framing

/// ASCII bytes of `text`.
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Every packet the msgpipe encoder produces for `payload`.
func msgpipePackets(
    _ payload: [UInt8], packetSize: Int, messageID: UInt32 = 1, channel: UInt8 = 0, flags: MessageFlags = []
) throws -> [[UInt8]] {
    let encoder = try MsgPipeEncoder(
        payload: payload, messageID: messageID, flags: flags, channel: channel, packetSize: packetSize)
    var out: [UInt8] = []
    return try (0..<encoder.packetCount).map { index in
        try encoder.writePacket(index: index, into: &out)
        return out
    }
}

/// Feeds `packets` to `decoder` (time standing still unless given) and collects every event.
func feed(
    _ packets: [[UInt8]], into decoder: inout some FrameDecoder, now: Duration = .zero, finish: Bool = false
) -> [FrameEvent] {
    var events: [FrameEvent] = []
    for packet in packets {
        decoder.receive(packet[...], now: now) { events.append($0) }
    }
    if finish { decoder.finish { events.append($0) } }
    return events
}

extension FrameEvent {
    /// The message body, when this is a message.
    var body: [UInt8]? {
        if case let .message(message) = self { message.body } else { nil }
    }
    /// The failure, when this is one.
    var failure: FramingError? {
        if case let .failure(error) = self { error } else { nil }
    }
}

/// Every packet `format` produces for `payload`.
func packets(_ format: FrameFormat, _ payload: [UInt8], packetSize: Int, messageID: UInt32 = 1) throws -> [[UInt8]] {
    var encoder = try format.makeEncoder(payload: payload, packetSize: packetSize, messageID: messageID)
    var out: [UInt8] = []
    var result: [[UInt8]] = []
    while encoder.writeNextPacket(into: &out) { result.append(out) }
    return result
}

/// Encodes `payload`, checks every packet against the format's rules, decodes, and checks the result.
func expectRoundTrip(
    _ format: FrameFormat, _ payload: [UInt8], packetSize: Int, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let values = try packets(format, payload, packetSize: packetSize)
    #expect(values.allSatisfy { $0.count <= packetSize }, sourceLocation: sourceLocation)
    switch format {
    case .legacy:
        let middle = values.dropFirst().dropLast()
        #expect(values.first?.starts(with: ascii("Start")) == true, sourceLocation: sourceLocation)
        #expect(values.last?.starts(with: ascii("End")) == true, sourceLocation: sourceLocation)
        #expect(!middle.contains { $0.starts(with: ascii("Start")) || $0.starts(with: ascii("End")) || $0.isEmpty },
            "a middle chunk begins with a marker", sourceLocation: sourceLocation)
    case .eom:
        #expect(values.last == ascii("EOM"), sourceLocation: sourceLocation)
        #expect(!values.dropLast().contains { $0 == ascii("EOM") || $0.isEmpty }, sourceLocation: sourceLocation)
    case .lines, .msgpipe:
        #expect(!values.contains { $0.isEmpty }, sourceLocation: sourceLocation)
    }
    var decoder = format.makeDecoder(limits: ReassemblyLimits(maximumMessageSize: 2 << 20))
    let events = feed(values, into: &decoder, finish: true)
    #expect(events.count == 1 && events.first?.body == payload,
        "\(format) round trip of \(payload.count) bytes at packet size \(packetSize): \(events.count) events",
        sourceLocation: sourceLocation)
}

/// A deterministic payload of `count` bytes from `seed`: random bytes mixed with marker fragments
/// (`Start`, `End`, `EOM`, `\n` and their prefixes) when `fragments` is set; no `\n` when `newlines` is false.
func generatedPayload(count: Int, seed: UInt64, fragments: Bool, newlines: Bool = true) -> [UInt8] {
    let pieces = ["Start", "End", "EOM", "\n", "S", "St", "Star", "E", "En", "EO", "StartEnd", "EndStart", "EOMEOM"]
        .map(ascii).filter { newlines || !$0.contains(UInt8(ascii: "\n")) }
    var state = seed | 1
    func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    var payload: [UInt8] = []
    payload.reserveCapacity(count + 8)
    while payload.count < count {
        let roll = next()
        if fragments, roll % 4 == 0 {
            payload += pieces[Int((roll >> 8) % UInt64(pieces.count))]
        } else {
            var byte = UInt8(truncatingIfNeeded: roll >> 16)
            if !newlines, byte == UInt8(ascii: "\n") { byte = 0 }
            payload.append(byte)
        }
    }
    return Array(payload.prefix(count))
}
