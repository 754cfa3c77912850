import Foundation
import Testing

/// `listen` and `serve` serve several centrals at once (`--max-centrals`): a central that connects and
/// holds its connection does not keep the next one waiting.
@Suite("msgpipe listen serves several centrals at once")
struct ConcurrentCentralsCLITests {
    typealias Scratch = ListenSendCLITests.Scratch

    /// One `listen --json` line with the peer.
    struct PeerMessage: Decodable {
        let connection: Int
        let peer: String
        let data: String
        var body: [UInt8] { [UInt8](Data(base64Encoded: data) ?? Data()) }
    }

    /// A `send` reading its one message from a pipe the test writes later: connected, sending nothing yet.
    final class HeldSender {
        let process = Process()
        let input = Pipe()
        let errors = Pipe()

        init(_ arguments: [String]) throws {
            process.executableURL = MsgPipeProcess.binary
            process.arguments = arguments
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
        }

        /// Writes the message, closes the pipe, and waits for the exit status.
        func release(_ body: [UInt8]) throws -> (status: Int32, stderr: String) {
            input.fileHandleForWriting.write(Data(body))
            try input.fileHandleForWriting.close()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
    }

    @Test("a second central is served while the first holds its connection", arguments: ["msgpipe", "legacy"])
    func secondCentralIsServedWhileTheFirstHolds(format: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--json", "--format", format, "--connections", "2", "--verbose"])
        let held = try HeldSender(["send", "--format", format] + scratch.link + ["-"])
        #expect(listener.waitForError(containing: "connection from unix:\(scratch.socket)#1"), "\(listener.stderrSoFar)")

        let second = payload(200_000, seed: 31)
        let sent = try scratch.send(["--format", format, try scratch.file("second", second)])
        #expect(sent.status == 0, "the second central waited for the first: \(sent.stderr)")
        #expect(held.process.isRunning, "the first central was to hold its connection meanwhile")

        let first = payload(150_000, seed: 32)
        let released = try held.release(first)
        #expect(released.status == 0, "\(released.stderr)")
        let result = listener.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let messages = try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(PeerMessage.self, from: Data($0.utf8))
        }
        #expect(messages.map(\.body) == [second, first])
        #expect(messages.map(\.peer) == ["unix:\(scratch.socket)#2", "unix:\(scratch.socket)#1"])
    }

    @Test("with --max-centrals 1 the second central waits until the first left")
    func oneCentralAtATime() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--json", "--connections", "2", "--max-centrals", "1", "--verbose"])
        let held = try HeldSender(["send"] + scratch.link + ["-"])
        #expect(listener.waitForError(containing: "connection from unix:\(scratch.socket)"), "\(listener.stderrSoFar)")
        let waiting = try RunningMsgPipe(["send", "--json"] + scratch.link + [try scratch.file("second", [2, 2])])
        // The second central's connection waits in the socket's backlog: nothing is acknowledged yet.
        #expect(!waiting.waitForError(containing: "never printed", seconds: 1))
        #expect(waiting.process.isRunning)
        #expect(try held.release([1, 1]).status == 0)
        #expect(waiting.finish().status == 0)
        let result = listener.finish()
        #expect(result.status == 0)
        let messages = try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(PeerMessage.self, from: Data($0.utf8))
        }
        #expect(messages.map(\.body) == [[1, 1], [2, 2]])
    }
}
