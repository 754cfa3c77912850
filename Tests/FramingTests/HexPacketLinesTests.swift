import Testing
@testable import Framing

/// Packets as hex lines (`msgpipe frame` / `deframe`): the bytes of each line, any split of the text, and
/// where decoding stops.
@Suite("hex packet lines")
struct HexPacketLinesTests {
    static func lines(_ format: FrameFormat, _ payload: String, packetSize: Int, messageID: UInt32 = 1) throws -> String {
        var encoder = try HexPacketLineEncoder(
            format: format, payload: ascii(payload), packetSize: packetSize, messageID: messageID)
        var out: [UInt8] = []
        var line: [UInt8] = []
        while encoder.writeNextLine(into: &line) { out += line }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `text` fed in chunks of `chunk` bytes, then finishes.
    static func decode(
        _ text: String, format: FrameFormat = .eom, chunk: Int = .max, maximumPacketSize: Int = 1 << 16,
        limits: ReassemblyLimits = ReassemblyLimits()
    ) -> [HexPacketLineDecoder.Event] {
        var decoder = HexPacketLineDecoder(format: format, limits: limits, maximumPacketSize: maximumPacketSize)
        var events: [HexPacketLineDecoder.Event] = []
        let bytes = ascii(text)
        var start = 0
        while start < bytes.count {
            let end = start + min(chunk, bytes.count - start)
            decoder.receive(bytes[start ..< end]) { events.append($0) }
            start = end
        }
        decoder.finish { events.append($0) }
        return events
    }

    @Test func eachPacketIsOneLowercaseHexLine() throws {
        #expect(try Self.lines(.eom, "hello", packetSize: 20) == "68656c6c6f\n454f4d\n")
        #expect(try Self.lines(.lines, "Hi", packetSize: 20) == "48690a\n")
        #expect(throws: FramingError.self) { try Self.lines(.msgpipe, "x", packetSize: 2) }
    }

    @Test("a message comes back whatever chunks the text arrives in", arguments: [1, 2, 3, 7, 1 << 16])
    func anySplitGivesTheSameMessages(chunk: Int) throws {
        let text = try Self.lines(.msgpipe, "first", packetSize: 8, messageID: 1)
            + "\r\n  \t\n" + " " + (try Self.lines(.msgpipe, "second", packetSize: 8, messageID: 2)).uppercased() + "\t"
        #expect(Self.decode(text, format: .msgpipe, chunk: chunk) == [.message(ascii("first")), .message(ascii("second"))])
    }

    @Test func aWordIsEightDigitsMostSignificantFirst() {
        #expect(Hex.string(UInt32(0xCBF4_3926)) == "cbf43926")
        #expect(Hex.string(UInt32(0x0000_00A0)) == "000000a0", "leading zeros kept")
        #expect(Hex.string(CRC32.checksum(Array("123456789".utf8))) == "cbf43926", "the CRC-32 check value")
    }

    @Test func aLastLineWithoutANewlineCounts() {
        #expect(Self.decode("6869\n454f4d") == [.message(ascii("hi"))])
    }

    @Test func badHexStopsAfterTheMessagesBeforeIt() {
        let events = Self.decode("6869\n454f4d\n6g\n6869\n454f4d\n")
        #expect(events == [.message(ascii("hi")), .failure(.badHex(line: 3))])
        #expect(Self.decode("686\n") == [.failure(.badHex(line: 1))], "an odd number of digits")
    }

    @Test func aPacketOverTheLimitIsRefusedWithItsLine() {
        #expect(Self.decode("6869\n686968\n", maximumPacketSize: 2)
            == [.failure(.framing(.packetTooLarge(size: 3, limit: 2), line: 2))])
    }

    @Test func aLineOverTheLimitIsRefusedBeforeItEnds() {
        var decoder = HexPacketLineDecoder(format: .eom, limits: ReassemblyLimits())
        #expect(decoder.maximumLineLength == 2 * 65536 + 64)
        var events: [HexPacketLineDecoder.Event] = []
        decoder.receive(ascii("6869\n")[...]) { events.append($0) }
        decoder.receive([UInt8](repeating: UInt8(ascii: "a"), count: decoder.maximumLineLength + 2)[...]) { events.append($0) }
        #expect(events == [.failure(.lineTooLong(line: 2, limit: decoder.maximumLineLength))])
        decoder.receive(ascii("\n454f4d\n")[...]) { events.append($0) }
        decoder.finish { events.append($0) }
        #expect(events.count == 1, "nothing follows the first failure")
    }

    @Test func inputEndingInsideAMessageIsIncomplete() {
        let events = Self.decode("6869\n")
        guard case .failure(.framing(.incompleteMessage, line: nil))? = events.last else {
            Issue.record("\(events)")
            return
        }
        #expect(events.count == 1)
    }

    @Test func aFramingFailureNamesItsLine() {
        var limits = ReassemblyLimits()
        limits.maximumMessageSize = 2
        let events = Self.decode("6869\n6869\n454f4d\n", limits: limits)
        guard case .failure(.framing(.messageTooLarge, line: 2))? = events.last else {
            Issue.record("\(events)")
            return
        }
    }

    @Test func failuresSayWhereInTheInput() {
        #expect("\(HexPacketLineError.badHex(line: 3))" == "bad hex on input line 3")
        #expect("\(HexPacketLineError.lineTooLong(line: 2, limit: 9))" == "input line 2 is longer than 9 hex digits")
        let tooLarge = FramingError.packetTooLarge(size: 3, limit: 2)
        #expect("\(HexPacketLineError.framing(tooLarge, line: 4))" == "\(tooLarge) on input line 4")
        #expect("\(HexPacketLineError.framing(tooLarge, line: nil))" == "\(tooLarge)")
    }

    @Test("each failure has the kind a caller acts on: bad hex, over a limit, incomplete, or the packets' integrity")
    func failureKinds() {
        let cases: [(HexPacketLineError, HexPacketLineError.Kind)] = [
            (.badHex(line: 3), .badHex),
            (.lineTooLong(line: 1, limit: 1_000), .overLimit),
            (.framing(.messageTooLarge(messageID: 1, size: 9, limit: 8), line: 2), .overLimit),
            (.framing(.tooManyMessagesInProgress(messageID: 1, limit: 4), line: 2), .overLimit),
            (.framing(.bufferedBytesExceeded(messageID: 1, needed: 9, limit: 8), line: 2), .overLimit),
            (.framing(.packetTooLarge(size: 600, limit: 512), line: 2), .overLimit),
            (.framing(.incompleteMessage(messageID: 1, channel: 0, receivedBytes: 10), line: nil), .incomplete),
            (.framing(.staleMessage(messageID: nil, channel: 0, receivedBytes: 10), line: 4), .incomplete),
            (.framing(.crcMismatch(messageID: 7, expected: 1, actual: 2), line: 5), .integrity),
            (.framing(.malformedControlPacket(reason: "short"), line: 1), .integrity),
        ]
        for (error, kind) in cases {
            #expect(error.kind == kind, "\(error)")
        }
    }
}
