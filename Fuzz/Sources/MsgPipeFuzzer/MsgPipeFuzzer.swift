import Framing
import FuzzSupport

/// One fuzz input, two targets:
///
/// 1. The packet decoder (`MsgPipePacket`, `PacketHeader`, `MessageHeader`, `ControlPacket`): the whole input
///    and every packet of the script are decoded; what decodes must encode to exactly the same bytes (the
///    format has one encoding: ULEB128 is minimal, flags and header bits are carried as they are).
/// 2. The reassembler (`MsgPipeReassembler`, small limits): the input is a script of chunks, each
///    `[length < 0xF0][length bytes]` (a packet from the peer) or `[0xF0 | action][argument]` (time passes,
///    the input ends, or a valid message is framed and fed in). After every step it holds no more than its
///    limits; every message it emits has its announced length and, framed again, reassembles to itself.
///
/// A broken invariant traps, which libFuzzer reports as a crash with the input saved.
enum MsgPipeFuzzTarget {
    static let limits = ReassemblyLimits(
        maximumMessageSize: 3000, maximumMessagesInProgress: 3, maximumBufferedBytes: 5000, staleTimeout: .seconds(5))

    static func run(_ input: [UInt8]) {
        checkPacket(input[...])
        checkMessageHeader(input[...])
        runReassembler(input)
    }

    /// What decodes as a packet encodes to the same bytes and decodes to the same packet.
    static func checkPacket(_ bytes: ArraySlice<UInt8>) {
        guard let packet = try? MsgPipePacket(decoding: bytes) else { return }
        var out: [UInt8] = []
        switch packet {
        case let .start(packetHeader, messageHeader, data):
            require(packetHeader.isStart && packetHeader.explicitOffset == nil, "Start packet header \(packetHeader)")
            packetHeader.encode(into: &out)
            messageHeader.encode(into: &out)
            require(out.count == packetHeader.encodedCount + messageHeader.encodedCount, "encodedCount of \(messageHeader)")
            out += data
        case let .continuation(packetHeader, data):
            require(!packetHeader.isStart, "continuation with S set")
            packetHeader.encode(into: &out)
            require(out.count == packetHeader.encodedCount, "encodedCount of \(packetHeader)")
            out += data
        case let .control(control):
            do {
                try control.encode(into: &out, packetSize: bytes.count)
            } catch {
                fatalError("control packet \(Array(bytes)) does not encode at its own size: \(error)")
            }
        }
        require(out.elementsEqual(bytes), "packet \(Array(bytes)) decodes to \(packet), which encodes to \(out)")
        require((try? MsgPipePacket(decoding: out[...])) == packet, "\(out) decodes differently the second time")
    }

    /// A message header decoded on its own encodes to the bytes it consumed.
    static func checkMessageHeader(_ bytes: ArraySlice<UInt8>) {
        var reader = ByteReader(bytes)
        guard let header = try? MessageHeader(decoding: &reader) else { return }
        let consumed = bytes.count - reader.remaining.count
        var out: [UInt8] = []
        header.encode(into: &out)
        require(out.elementsEqual(bytes.prefix(consumed)), "header \(Array(bytes.prefix(consumed))) encodes to \(out)")
        require(header.flags.contains(.response) == (header.correlationID != nil), "response flag and correlation id")
    }

    static func runReassembler(_ input: [UInt8]) {
        var reassembler = MsgPipeReassembler(limits: limits)
        var script = FuzzScript(input)
        var now = Duration.zero
        var events: [FrameEvent] = []
        while !script.isAtEnd {
            let head = script.byte()
            if head < 0xF0 {
                let packet = script.take(Int(head))
                checkPacket(packet)
                reassembler.receive(packet, now: now) { events.append($0) }
            } else {
                let argument = script.byte()
                switch head & 0x0F {
                case 0:
                    now += .milliseconds(100 * Int(argument))
                    reassembler.expireStaleMessages(now: now) { events.append($0) }
                case 1:
                    reassembler.finish { events.append($0) }
                    require(reassembler.messagesInProgress == 0 && reassembler.bufferedBytes == 0, "finish left state")
                default:
                    // A valid message from an honest sender, so the completion paths are reached often.
                    var body = [UInt8](repeating: head, count: Int(argument) * 5)
                    if !body.isEmpty { body[body.count / 2] = argument }
                    let flags = MessageFlags(rawValue: script.byte() & 0x1D)
                    guard let encoder = try? MsgPipeEncoder(
                        payload: body, messageID: UInt32(script.byte()), flags: flags,
                        correlationID: flags.contains(.response) ? 5 : nil, channel: head & 0x03,
                        packetSize: 20 + Int(script.byte()))
                    else { fatalError("the encoder refused a valid message") }
                    var encoder2 = encoder
                    var packet: [UInt8] = []
                    while encoder2.writeNextPacket(into: &packet) {
                        reassembler.receive(packet[...], now: now) { events.append($0) }
                    }
                }
            }
            checkBounds(reassembler)
            for event in events { check(event) }
            events.removeAll(keepingCapacity: true)
        }
    }

    static func checkBounds(_ reassembler: MsgPipeReassembler) {
        require(reassembler.messagesInProgress <= limits.maximumMessagesInProgress,
                "\(reassembler.messagesInProgress) messages in progress")
        require(reassembler.bufferedBytes <= limits.maximumBufferedBytes, "\(reassembler.bufferedBytes) bytes buffered")
        for channel: UInt8 in 0...3 {
            if let progress = reassembler.progress(onChannel: channel) {
                require(progress.receivedStreamBytes <= Int(progress.header.length) + 4, "progress \(progress)")
            }
        }
    }

    /// A message is what its header announced and, framed again, reassembles to itself.
    static func check(_ event: FrameEvent) {
        guard case let .message(message) = event else { return }
        guard let header = message.header else { fatalError("a msgpipe message without header") }
        require(message.body.count == Int(header.length) && message.body.count <= limits.maximumMessageSize,
                "message of \(message.body.count) bytes announced \(header.length)")
        require(message.channel <= 3 && !header.flags.contains(.checked), "message \(header) on \(message.channel)")
        guard var encoder = try? MsgPipeEncoder(
            payload: message.body, messageID: header.messageID, flags: header.flags,
            correlationID: header.correlationID, channel: message.channel, packetSize: 64)
        else { fatalError("a received message does not encode: \(header)") }
        require(encoder.header == header, "\(header) encodes as \(encoder.header)")
        var fresh = MsgPipeReassembler(limits: limits)
        var again: [FrameEvent] = []
        var packet: [UInt8] = []
        while encoder.writeNextPacket(into: &packet) { fresh.receive(packet[...], now: .zero) { again.append($0) } }
        require(again == [event], "\(header) framed again reassembles to \(again)")
    }
}

@main
enum MsgPipeFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "MsgPipeFuzzer", seeds: seeds, target: MsgPipeFuzzTarget.run)
    }

    /// PROTOCOL.md 1 and 3.3 vectors, then scripts that frame messages and feed packets.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let hello = hex("c0 10 00 01 05 68 65 6c 6c 6f 86 a6 10 36")
        var seeds: [(name: String, bytes: [UInt8])] = [
            ("hello", hello),
            ("empty", hex("c0 10 00 01 00 00 00 00 00")),
            ("max-header", hex("c0 10 12 ff ff ff ff 0f ff ff ff ff 0f ff ff ff ff 0f")),
            ("control", hex("c0 11 01 07 05 01 05 e7 87")),
            ("reliable-hi", hex("c0 10 04 01 02 68 69 ac 2a 93 d8 ab da")),
            ("start", hex("80 10 04 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 61 6b")),
            ("explicit", hex("61 0e 6e 6f 70 71 72 73 74 e5 6a 59 1a")),
            ("checked", hex("80 10 24 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 1c 10")),
        ]
        // Scripts: the vectors as packets, a two-packet message, interleaved channels, time and end.
        var script: [UInt8] = [UInt8(hello.count)] + hello
        script += [0x14] + hex("80 10 04 01 14 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 61 6b")
        script += [0x0c] + hex("41 6e 6f 70 71 72 73 74 e5 6a 59 1a")
        script += [0xF2, 40, 0x04, 9, 10, 0xF3, 3, 0x10, 2, 200, 0xF0, 60, 0xF1, 0]
        seeds.append(("script", script))
        for (index, channel) in [UInt8(0), 1, 2, 3].enumerated() {
            var packets: [UInt8] = []
            let body = [UInt8](repeating: UInt8(index), count: 30 + index * 50)
            var encoder = try! MsgPipeEncoder(payload: body, messageID: UInt32(index + 1), channel: channel, packetSize: 23)
            var packet: [UInt8] = []
            while encoder.writeNextPacket(into: &packet) { packets += [UInt8(packet.count)] + packet }
            seeds.append(("channel-\(channel)", packets))
        }
        return seeds
    }
}
