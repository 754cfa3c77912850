import Foundation
import MsgPipe
import Testing

/// Inputs read whole or within a limit, sets of inputs checked up front, output written whole.
@Suite struct InputFileTests {
    @Test func aFileIsReadWholeAndItsSizeKnown() throws {
        let path = try temporaryDirectory() + "/in"
        let bytes = (0 ..< 200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try write(bytes, to: path)
        let input = try InputFile(path: path)
        #expect(input.regularFileSize == bytes.count)
        #expect(try input.readAll() == bytes, "several chunks, in order")
        #expect(try InputFile(path: "-").regularFileSize == nil, "standard input's size is not known ahead")
    }

    @Test func aLimitStopsTheReadAndSaysWhichLimit() throws {
        let path = try temporaryDirectory() + "/in"
        try write([UInt8](repeating: 7, count: 101), to: path)
        #expect(try InputFile(path: path).readAll(limit: 101).count == 101, "exactly the limit is fine")
        #expect {
            _ = try InputFile(path: path).readAll(limit: 100)
        } throws: { error in
            (error as? FileIOError)?.operation == .tooLarge(limit: 100)
        }
    }

    @Test func aMissingFileFailsToOpenAndNamesIt() {
        #expect {
            _ = try InputFiles(paths: ["-", "/nonexistent/msgpipe-input"])
        } throws: { error in
            guard let error = error as? FileIOError else { return false }
            return error.operation == .open && error.description.hasPrefix("cannot open /nonexistent/msgpipe-input: ")
        }
    }

    @Test func aSetOfInputsKnowsTheSizesAndRereadsFiles() throws {
        let directory = try temporaryDirectory()
        try write([1, 2, 3], to: directory + "/a")
        try write([], to: directory + "/b")
        let inputs = try InputFiles(paths: [directory + "/a", directory + "/b"])
        #expect(inputs.sizes == [3, 0])
        #expect(try inputs.body(0) == [1, 2, 3])
        try write([9], to: directory + "/a")
        #expect(try inputs.body(0) == [9], "a file is read when its body is asked for")
        #expect(try inputs.body(1) == [])
    }

    @Test func allBodiesAreReadInOrderOrTheFirstUnreadableFailsTheWhole() throws {
        let directory = try temporaryDirectory()
        try write([1, 2], to: directory + "/a")
        try write([3], to: directory + "/b")
        #expect(try InputFiles(paths: [directory + "/a", directory + "/b"]).bodies() == [[1, 2], [3]])
        let unreadable = try InputFiles(paths: [directory + "/a", directory])  // a directory opens, but cannot be read
        #expect {
            _ = try unreadable.bodies()
        } throws: { error in
            (error as? FileIOError)?.operation == .read
        }
    }

    @Test func anOutputBufferWritesEverythingOnFlush() throws {
        let (path, descriptor) = try openedFile()
        defer { close(descriptor) }
        var output = OutputBuffer(descriptor: descriptor)
        let bytes = (0 ..< 70_000).map { UInt8(truncatingIfNeeded: $0) }
        try output.append(bytes)
        try output.append([1, 2])
        try output.flush()
        #expect(try read(path) == bytes + [1, 2])
        var broken = OutputBuffer(descriptor: -1)
        try broken.append([1])
        #expect {
            try broken.flush()
        } throws: { error in
            (error as? FileIOError).map { $0.operation == .write && $0.description.hasPrefix("cannot write output: ") } ?? false
        }
    }

    @Test func anUnbufferedWriteLandsAtOnceAndOnlyATerminalIsOne() throws {
        let (path, descriptor) = try openedFile()
        defer { close(descriptor) }
        try OutputBuffer.write(Array("line\n".utf8), to: descriptor)
        #expect(try read(path) == Array("line\n".utf8))
        #expect(throws: FileIOError.self) { try OutputBuffer.write([1], to: -1) }
        #expect(!OutputBuffer.isTerminal(descriptor))
        let terminal = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)  // a pseudo-terminal's controlling side
        try #require(terminal >= 0)
        defer { close(terminal) }
        #expect(OutputBuffer.isTerminal(terminal))
    }

    @Test func hexPacketLinesGiveTheirMessagesInOrderOrTheFirstProblem() throws {
        var text: [UInt8] = []
        for (id, payload) in [(1, Array(repeating: UInt8(7), count: 300)), (2, Array(repeating: UInt8(9), count: 100))] {
            var lines = try HexPacketLineEncoder(format: .msgpipe, payload: payload, packetSize: 20, messageID: UInt32(id))
            var line: [UInt8] = []
            while lines.writeNextLine(into: &line) { text += line }
        }
        func decode(_ text: [UInt8]) throws -> (messages: [[UInt8]], problem: HexPacketLineError?) {
            let (path, descriptor) = try openedFile()
            try OutputBuffer.write(text, to: descriptor)
            close(descriptor)
            var decoder = HexPacketLineDecoder(format: .msgpipe, limits: ReassemblyLimits())
            var messages: [[UInt8]] = []
            let problem = try InputFile(path: path).decodeHexPacketLines(with: &decoder) { messages.append($0) }
            return (messages, problem)
        }
        let whole = try decode(text)
        #expect(whole.messages == [Array(repeating: 7, count: 300), Array(repeating: 9, count: 100)] && whole.problem == nil)
        // Cut inside the second message: the first arrives, then the partial one is the problem.
        let lastLine = try #require(text.dropLast().lastIndex(of: UInt8(ascii: "\n")))
        let cut = try decode(Array(text[...lastLine]))
        #expect(cut.messages == [Array(repeating: 7, count: 300)])
        guard case .framing(.incompleteMessage, _)? = cut.problem else {
            Issue.record("expected an incomplete message, got \(String(describing: cut.problem))")
            return
        }
    }
}
