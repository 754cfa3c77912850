@testable import Framing

/// Bytes from lowercase hex (test vectors only; traps on a typo in a literal).
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8).filter { $0 != UInt8(ascii: " ") }
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

/// Lowercase hex of `bytes`.
func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

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
