import Foundation
import Testing
import TestSupport

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
            feed(body, to: input)
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

/// `send --role peripheral --centrals N`: one peripheral sends every message to each subscribed central.
@Suite("msgpipe send as peripheral to several centrals")
struct PeripheralToSeveralCentralsCLITests {
    typealias Scratch = ListenSendCLITests.Scratch

    struct SendLine: Decodable {
        let index: Int
        let bytes: Int
        let peer: String
    }

    @Test("one peripheral sends 1 MiB to two centrals at once: both byte-identical, a JSON line per central", arguments: ["msgpipe", "legacy"])
    func toTwoCentrals(format: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let big = payload(1 << 20, seed: 41).map { format == "legacy" ? $0 : $0 }
        let sender = try RunningMsgPipe(
            ["send", "--role", "peripheral", "--centrals", "2", "--json", "--format", format] + scratch.link
                + [try scratch.file("big", big)])
        #expect(sender.waitForError(containing: "listening on unix:"), "no ready line: \(sender.stderrSoFar)")
        let centrals = try (0 ..< 2).map { _ in
            try RunningMsgPipe(["listen", "--role", "central", "--format", format, "--count", "1"] + scratch.link)
        }
        for central in centrals {
            let result = central.finish()
            #expect(result.status == 0, "listen: \(result.stderr)")
            expectSameBytes(result.stdout, big, "a central's 1 MiB")
        }
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let lines = try String(decoding: sent.stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(SendLine.self, from: Data($0.utf8))
        }
        #expect(lines.count == 2)
        #expect(Set(lines.map(\.peer)) == ["unix:\(scratch.socket)#1", "unix:\(scratch.socket)#2"])
        #expect(lines.allSatisfy { $0.bytes == big.count && $0.index == 1 })
    }

    @Test("a central that leaves for good fails the peripheral's send, named by its address; the other still gets it")
    func aCentralThatLeavesIsReported() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let body = payload(64 << 10, seed: 42)
        // --timeout ends the wait for the central that left; it bounds the other's transfer too, hence 15 s for
        // 64 KiB on a unix socket.
        let sender = try RunningMsgPipe(
            ["send", "--role", "peripheral", "--centrals", "2", "--timeout", "15", "--verbose"] + scratch.link
                + [try scratch.file("b", body)])
        #expect(sender.waitForError(containing: "listening on unix:"))
        // The first central subscribes and is killed before anything is sent (the sender waits for two): it never
        // takes the message, however fast or slow the machine.
        let leaving = try RunningMsgPipe(["listen", "--role", "central"] + scratch.link)
        #expect(sender.waitForError(containing: "#1 subscribed"), "\(sender.stderrSoFar)")
        kill(leaving.process.processIdentifier, SIGKILL)
        let staying = try RunningMsgPipe(["listen", "--role", "central", "--count", "1"] + scratch.link)
        let stayed = staying.finish()
        #expect(stayed.status == 0, "\(stayed.stderr)")
        expectSameBytes(stayed.stdout, body, "the staying central's message")
        let sent = sender.finish()
        #expect(sent.status == 2, "a lost central must not end in exit 0: \(sent.stderr)")
        #expect(sent.stderr.contains("central unix:\(scratch.socket)#1 failed (exit code 2)"), "the lost central is named: \(sent.stderr)")
        _ = leaving.finish()
    }
}

/// Examples/Push serves, two `msgpipe listen --role central` processes subscribe, and both get the ticket.
@Suite("the push example")
struct PushExampleTests {
    @Test func bothCentralsReceiveTheTicketInTheSeedsFormat() throws {
        let socket = "/tmp/msgpipe-push-\(getpid()).sock"
        let push = Process()
        push.executableURL = MsgPipeProcess.binary.deletingLastPathComponent().appendingPathComponent("Push")
        push.arguments = ["unix:" + socket, "2", "{\"ticket\":42}"]
        let output = Pipe()
        push.standardOutput = output
        try push.run()
        var text = ""
        while !text.contains("listening") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let centrals = try (0 ..< 2).map { _ in
            try RunningMsgPipe([
                "listen", "--role", "central", "--link", "unix:" + socket, "--format", "legacy",
                "--profile", "custom:FFF0:FFF2:FFF1", "--count", "1",
            ])
        }
        for central in centrals {
            let result = central.finish()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == Array("{\"ticket\":42}".utf8))
        }
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        push.waitUntilExit()
        #expect(push.terminationStatus == 0)
        #expect(text.components(separatedBy: ": success").count == 3, "\(text)")
    }
}
