import Framing
import FuzzSupport

/// The legacy Start/End, EOM and lines decoders, each fed the same script of chunks: `[length < 0xF0][length
/// bytes]` (a value from the peer) or `[0xF0 | action][argument]` (time passes, or the input ends).
///
/// After every step: each message is within the size limit and, encoded again in its format (at a packet size
/// the script picks), decodes to exactly itself and nothing else. The text formats cut a message freely, so the
/// round trip is per message, not per value.
enum TextFormatsFuzzTarget {
    static let limits = ReassemblyLimits(
        maximumMessageSize: 2000, maximumMessagesInProgress: 1, maximumBufferedBytes: 3000, staleTimeout: .seconds(5))
    static let formats: [FrameFormat] = [.legacy, .eom, .lines]

    static func run(_ input: [UInt8]) {
        var decoders = formats.map { $0.makeDecoder(limits: limits) }
        var script = FuzzScript(input)
        var now = Duration.zero
        let packetSize = 8 + Int(script.byte())
        while !script.isAtEnd {
            let head = script.byte()
            for index in formats.indices {
                var events: [FrameEvent] = []
                if head < 0xF0 {
                    decoders[index].receive(script.bytes.prefix(Int(head)), now: now) { events.append($0) }
                } else if head & 0x0F == 0 {
                    decoders[index].expireStaleMessages(now: now + .milliseconds(100 * Int(script.bytes.first ?? 0))) {
                        events.append($0)
                    }
                } else {
                    decoders[index].finish { events.append($0) }
                }
                for event in events { check(event, format: formats[index], packetSize: packetSize) }
            }
            if head < 0xF0 {
                _ = script.take(Int(head))
            } else {
                now += .milliseconds(100 * Int(script.byte()))
            }
        }
    }

    static func check(_ event: FrameEvent, format: FrameFormat, packetSize: Int) {
        guard case let .message(message) = event else { return }
        let limit = min(limits.maximumMessageSize, limits.maximumBufferedBytes)
        require(message.body.count <= limit, "\(format): message of \(message.body.count) bytes over \(limit)")
        require(message.header == nil && message.channel == 0, "\(format): message with header or channel")
        if format == .lines { require(!message.body.contains(LinesDecoder.newline), "a line with a newline") }
        let encoder: any FrameEncoder
        do {
            encoder = try format.makeEncoder(payload: message.body, packetSize: packetSize)
        } catch {
            fatalError("\(format): a received message does not encode: \(error)")
        }
        var writer = encoder
        var decoder = format.makeDecoder(limits: limits)
        var again: [FrameEvent] = []
        var packet: [UInt8] = []
        var packets = 0
        while writer.writeNextPacket(into: &packet) {
            require(packet.count <= packetSize, "\(format): a value of \(packet.count) bytes over \(packetSize)")
            packets += 1
            require(packets <= message.body.count + 3, "\(format): the encoder does not end")
            decoder.receive(packet[...], now: .zero) { again.append($0) }
        }
        decoder.finish { again.append($0) }
        require(again == [event], "\(format): \(message.body) encoded again decodes to \(again)")
    }
}

@main
enum TextFormatsFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "TextFormatsFuzzer", seeds: seeds, target: TextFormatsFuzzTarget.run)
    }

    /// PROTOCOL.md 4: each format's values for one message, as a script, plus time and end.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        func script(_ values: [String]) -> [UInt8] {
            values.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        }
        return [
            ("legacy", [12] + script(["Starthello ", "world", "Endagain"])),
            ("legacy-markers", [12] + script(["Start", "End", "StartStart", "EndEnd", "x"]) + [0xF0, 80, 0xF1, 0]),
            ("eom", [12] + script(["hello ", "world", "EOM", "EOM", "EO", "M", "EOM"])),
            ("lines", [12] + script(["one\ntwo\nthr", "ee\n", "\n", "no end"]) + [0xF1, 0]),
            ("stale", [12] + script(["Startabc", "abc"]) + [0xF0, 200] + script(["def", "EOM", "\n"])),
        ]
    }
}
