import Testing
@testable import Framing
import TestSupport

/// A pinned encoding: format, packet size, payload, the exact values in hex.
struct FormatVector: Sendable, CustomTestStringConvertible {
    let format: FrameFormat
    let packetSize: Int
    let payload: [UInt8]
    let values: [String]
    var testDescription: String { "\(format) P=\(packetSize) \(hex(payload))" }

    init(_ format: FrameFormat, _ packetSize: Int, _ payload: String, _ values: [String]) {
        self.format = format
        self.packetSize = packetSize
        self.payload = ascii(payload)
        self.values = values.map { hex(ascii($0)) }
    }

    init(_ format: FrameFormat, _ packetSize: Int, payloadHex: String, _ values: [String]) {
        self.format = format
        self.packetSize = packetSize
        payload = bytes(payloadHex)
        self.values = values
    }
}

@Suite("format vectors")
struct FormatVectorTests {
    static let vectors: [FormatVector] = [
        // msgpipe (header byte, version/kind, flags, id, length, body, CRC-32 little-endian)
        FormatVector(.msgpipe, 20, payloadHex: "68656c6c6f", ["c010000105" + "68656c6c6f" + "86a61036"]),
        FormatVector(.msgpipe, 20, payloadHex: "", ["c01000010000000000"]),
        FormatVector(.msgpipe, 7, payloadHex: "68656c6c6f", ["80100001056865", "016c6c6f86a610", "4236"]),
        // legacy: the pinned "hello" at MTU 23, markers inside the payload, the smallest packet size
        FormatVector(.legacy, 20, "hello", ["Starthello", "End"]),
        FormatVector(.legacy, 20, "", ["Start", "End"]),
        FormatVector(.legacy, 20, "EndStart", ["StartEndStart", "End"]),
        FormatVector(.legacy, 10, "abcdeStart12345678901", ["Startabcd", "eStart1234", "End5678901"]),
        FormatVector(.legacy, 10, "abcdeEnd123456789012", ["Startabcd", "eEnd123456", "End789012"]),
        FormatVector(.legacy, 6, "xEndStart", ["Start", "xEndSt", "Endart"]),
        FormatVector(.legacy, 20, "hello world, hello again", ["Starthello world, he", "Endllo again"]),
        // eom: never a data value equal to EOM
        FormatVector(.eom, 20, "hello", ["hello", "EOM"]),
        FormatVector(.eom, 20, "", ["EOM"]),
        FormatVector(.eom, 20, "EOM", ["EO", "M", "EOM"]),
        FormatVector(.eom, 3, "abcEOMxy", ["abc", "EO", "Mxy", "EOM"]),
        // lines
        FormatVector(.lines, 20, "hello", ["hello\n"]),
        FormatVector(.lines, 3, "hello", ["hel", "lo\n"]),
        FormatVector(.lines, 20, "", ["\n"]),
    ]

    @Test("each format encodes the payload to the pinned values", arguments: vectors)
    func encodes(vector: FormatVector) throws {
        #expect(try packets(vector.format, vector.payload, packetSize: vector.packetSize).map(hex) == vector.values)
    }

    @Test("each format decodes the pinned values to the payload", arguments: vectors)
    func decodes(vector: FormatVector) {
        var decoder = vector.format.makeDecoder()
        let events = feed(vector.values.map(bytes), into: &decoder, finish: true)
        #expect(events.map(\.body) == [vector.payload])
    }

    @Test("every truncation of a vector's packet list leaves the message incomplete", arguments: vectors)
    func listTruncations(vector: FormatVector) {
        for cut in 1..<vector.values.count {
            var decoder = vector.format.makeDecoder()
            let events = feed(vector.values.prefix(cut).map(bytes), into: &decoder, finish: true)
            #expect(events.count == 1)
            guard case .incompleteMessage = events.first?.failure else {
                Issue.record("cut at \(cut): \(events)")
                continue
            }
        }
    }

    @Test("every byte truncation of a vector's last packet (its marker, for legacy) gives only failures",
        arguments: vectors)
    func lastPacketTruncations(vector: FormatVector) {
        let values = vector.values.map(bytes)
        guard let last = values.last else { return }
        // Legacy has no integrity check: a shortened `End` value that keeps its marker is a shorter message.
        let cuts = vector.format == .legacy ? 0..<3 : 0..<last.count
        for cut in cuts {
            var decoder = vector.format.makeDecoder()
            let fed = Array(values.dropLast()) + [Array(last[..<cut])]
            let events = feed(fed, into: &decoder, finish: true)
            #expect(events.allSatisfy { $0.failure != nil }, "cut at \(cut): \(events)")
            // Only for lines does a lone empty value carry nothing at all, so nothing is reported.
            let silent = vector.format == .lines && fed.allSatisfy(\.isEmpty)
            #expect(events.isEmpty == silent, "cut at \(cut): \(events)")
        }
    }
}

@Suite("legacy, eom and lines decoders")
struct TextDecoderTests {
    @Test("legacy decodes markers alone or with data after them")
    func legacyExamples() {
        var decoder = LegacyDecoder()
        let events = feed([ascii("Start"), ascii("hel"), ascii("lo"), ascii("End"), ascii("Starthel"),
            ascii("lo wor"), ascii("Endld")], into: &decoder)
        #expect(events.map(\.body) == [ascii("hello"), ascii("hello world")])
    }

    @Test("legacy reports a value outside a message and a Start inside an open one")
    func legacyViolations() {
        var decoder = LegacyDecoder()
        let events = feed([ascii("stray"), ascii("Startab"), ascii("Startcd"), ascii("End"), ascii("Endx")],
            into: &decoder)
        #expect(events == [
            .failure(.valueOutsideMessage(format: "legacy", size: 5)),
            .failure(.messageInterrupted(messageID: nil, channel: 0, receivedBytes: 2)),
            .message(FramedMessage(body: ascii("cd"))),
            .failure(.valueOutsideMessage(format: "legacy", size: 4)),
        ])
    }

    @Test("text decoders refuse a message over the size limit once and recover after its end",
        arguments: [FrameFormat.legacy, .eom, .lines])
    func overLimit(format: FrameFormat) throws {
        let limits = ReassemblyLimits(maximumMessageSize: 10)
        var decoder = format.makeDecoder(limits: limits)
        let big = try packets(format, [UInt8](repeating: 0x41, count: 30), packetSize: 6)
        let small = try packets(format, ascii("ok"), packetSize: 20)
        let events = feed(big + small, into: &decoder, finish: true)
        #expect(events.count == 2)
        guard case .messageTooLarge(nil, let size, 10) = events.first?.failure, size > 10, size <= 16 else {
            Issue.record("\(events)")
            return
        }
        #expect(events.last?.body == ascii("ok"))
    }

    @Test("text decoders drop a message idle past the stale timeout", arguments: [FrameFormat.legacy, .eom, .lines])
    func stale(format: FrameFormat) throws {
        var decoder = format.makeDecoder(limits: ReassemblyLimits(staleTimeout: .seconds(5)))
        let values = try packets(format, ascii("hello world"), packetSize: 6)
        var events = feed(Array(values.prefix(1)), into: &decoder, now: .seconds(1))
        decoder.expireStaleMessages(now: .seconds(7)) { events.append($0) }
        guard case .staleMessage(nil, 0, _) = events.first?.failure, events.count == 1 else {
            Issue.record("\(events)")
            return
        }
        #expect(feed(try packets(format, ascii("again"), packetSize: 6), into: &decoder, now: .seconds(8))
            .map(\.body) == [ascii("again")])
    }

    @Test("lines delivers several lines from one value and a line split over values")
    func linesSplitting() {
        var decoder = LinesDecoder()
        let events = feed([ascii("ab\ncd\n\nef"), ascii("gh\n")], into: &decoder, finish: true)
        #expect(events.map(\.body) == [ascii("ab"), ascii("cd"), [], ascii("efgh")])
    }

    @Test("lines refuses a payload containing a newline, naming its offset")
    func linesRefusesNewline() {
        #expect(throws: FramingError.payloadContainsNewline(offset: 3)) {
            try LinesEncoder(payload: ascii("abc\ndef"), packetSize: 20)
        }
    }

    @Test("packet sizes below each format's minimum are refused with a typed error",
        arguments: [(FrameFormat.legacy, 5), (.eom, 2), (.lines, 0), (.msgpipe, 6)])
    func minimumPacketSize(format: FrameFormat, packetSize: Int) {
        #expect {
            try format.makeEncoder(payload: ascii("x"), packetSize: packetSize)
        } throws: { error in
            guard case let .packetSizeTooSmall(name, size, _) = error as? FramingError else { return false }
            return name == format.rawValue && size == packetSize
        }
        #expect(format.minimumPacketSize > packetSize)
    }
}
