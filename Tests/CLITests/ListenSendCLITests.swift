import Foundation
import Testing
import TestSupport

/// `msgpipe listen` and `msgpipe send` as processes over `--link unix:PATH`: the same GATT service, GATTLink
/// and Transport as over Bluetooth, without a radio.
@Suite("msgpipe listen and send over a UNIX socket")
struct ListenSendCLITests {
    /// A scratch directory with a socket path and helpers to write input files; removed afterwards.
    struct Scratch {
        let directory: URL
        var socket: String { directory.appendingPathComponent("s.sock").path }
        var link: [String] { ["--link", "unix:" + socket] }

        init() throws { directory = try makeScratchDirectory() }
        func remove() { try? FileManager.default.removeItem(at: directory) }

        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url.path
        }

        /// Starts `msgpipe listen` on the socket and waits for its ready line.
        func listen(_ arguments: [String]) throws -> RunningMsgPipe {
            let listener = try RunningMsgPipe(["listen"] + link + arguments)
            #expect(listener.waitForError(containing: "listening on unix:"), "no ready line: \(listener.stderrSoFar)")
            return listener
        }

        func send(_ arguments: [String], input: [UInt8] = []) throws -> MsgPipeProcess.Result {
            try MsgPipeProcess.run(["send"] + link + arguments, input: input)
        }
    }

    /// One `--json` line of listen.
    struct JSONMessage: Decodable {
        let index: Int
        let connection: Int
        let id: Int?
        let bytes: Int
        let crc32: String
        let data: String
        var body: [UInt8] { [UInt8](Data(base64Encoded: data) ?? Data()) }
    }

    static func messages(_ stdout: [UInt8]) throws -> [JSONMessage] {
        try String(decoding: stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(JSONMessage.self, from: Data($0.utf8))
        }
    }

    static let combinations: [(String, String)] = ["msgpipe", "legacy", "eom", "lines"].flatMap { format in
        ["msgpipe", "nus"].map { (format, $0) }
    }

    @Test("several files arrive in order as JSON lines, in every format and profile", arguments: combinations)
    func severalFilesInEveryFormat(format: String, profile: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let options = ["--format", format, "--profile", profile]
        let listener = try scratch.listen(options + ["--json", "--connections", "1"])
        let bodies: [[UInt8]] = [Array("first".utf8), [], Array("the third message".utf8), payload(3000, seed: 3)
            .map { $0 == 0x0A ? 0x20 : $0 }]
        let files = try bodies.enumerated().map { try scratch.file("in\($0.offset)", $0.element) }
        let sent = try scratch.send(options + files)
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let result = listener.finish()
        #expect(result.status == 0, "listen: \(result.stderr)")
        let received = try Self.messages(result.stdout)
        #expect(received.map(\.body) == bodies)
        #expect(received.map(\.index) == [1, 2, 3, 4])
        #expect(received.map(\.bytes) == bodies.map(\.count))
        #expect(received.allSatisfy { $0.connection == 1 })
        #expect(received.map(\.id) == (format == "msgpipe" ? [1, 2, 3, 4] : [nil, nil, nil, nil]))
    }

    @Test("one MiB arrives byte-identical on standard output; standard input is a message")
    func oneMebibyteAndStandardInput() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--connections", "2"])
        let big = payload(1 << 20, seed: 11)
        let sent = try scratch.send([try scratch.file("big", big)])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let piped = try scratch.send([], input: Array("from standard input".utf8))
        #expect(piped.status == 0, "send: \(piped.stderr)")
        let result = listener.finish()
        #expect(result.status == 0)
        #expect(result.stdout.count == big.count + 19)
        expectSameBytes(result.stdout.prefix(big.count), big, "the 1 MiB message")
        #expect(String(decoding: result.stdout.suffix(19), as: UTF8.self) == "from standard input")
    }

    @Test("--out-dir writes a file per message, creating the directory and continuing the numbering")
    func outputDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let out = scratch.directory.appendingPathComponent("received/nested")
        for round in 0 ..< 2 {
            let listener = try scratch.listen(["--out-dir", out.path, "--connections", "1"])
            let files = try ["a", "", "ccc"].enumerated().map { try scratch.file("f\(round)\($0.offset)", Array($0.element.utf8)) }
            let sent = try scratch.send(files)
            #expect(sent.status == 0, "send: \(sent.stderr)")
            #expect(listener.finish().status == 0)
        }
        // Besides the messages only msgpipe's hidden delivery journal and its lock: no temporary file is left.
        let all = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        #expect(all.filter { $0.hasPrefix(".") } == [".msgpipe-delivered", ".msgpipe-lock"])
        let names = all.filter { !$0.hasPrefix(".") }
        #expect(names == (1 ... 6).map { String(format: "%08d.msg", $0) })
        let contents = try names.map { String(decoding: try Data(contentsOf: out.appendingPathComponent($0)), as: UTF8.self) }
        #expect(contents == ["a", "", "ccc", "a", "", "ccc"])
    }

    @Test("a sender killed mid-message and run again delivers the message exactly once")
    func killedSenderRunAgainDeliversOnce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--json", "--connections", "2"])
        let body = payload(400_000, seed: 21)
        let file = try scratch.file("body", body)
        let killed = try scratch.send(["--kill-after-bytes", "150000", file])
        #expect(killed.status == 9, "the first sender was to be killed mid-transfer: \(killed.stderr)")
        let again = try scratch.send([file])
        #expect(again.status == 0, "send: \(again.stderr)")
        let result = listener.finish()
        #expect(result.status == 0)
        let received = try Self.messages(result.stdout)
        #expect(received.count == 1)
        #expect(received.first?.body == body)
        #expect(received.first?.connection == 2)
        // The dead sender's session waits at the listener (its peer may come back within the resume window)
        // and its partial message is never written: the new process's session delivered the message once.
    }

    @Test("a listener killed mid-message wrote nothing; send reconnects and a new listener gets the message whole")
    func killedListenerRestartedGetsTheMessage() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let killed = try scratch.listen(["--json", "--count", "1", "--kill-after-bytes", "150000"])
        let body = payload(400_000, seed: 23)
        let sender = try RunningMsgPipe(["send"] + scratch.link + ["--verbose", try scratch.file("body", body)])
        let dead = killed.finish()
        #expect(dead.status == 9, "the first listener was to be killed mid-message: \(dead.stderr)")
        #expect(dead.stdout.isEmpty, "a listener killed mid-message writes nothing")
        #expect(dead.stderr.contains("killing itself after"), "\(dead.stderr)")
        let listener = try scratch.listen(["--json", "--count", "1"])
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
        #expect(sent.stderr.contains("reconnected"), "\(sent.stderr)")
        let result = listener.finish()
        #expect(result.status == 0)
        #expect(try Self.messages(result.stdout).map(\.body) == [body])
    }

    @Test("a link dropped mid-transfer reconnects and Transport resumes the same session: delivered once")
    func droppedLinkResumes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--json", "--connections", "2", "--drop-after-bytes", "300000"])
        let body = payload(500_000, seed: 8)
        let sent = try scratch.send(["--verbose", try scratch.file("body", body)])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        #expect(sent.stderr.contains("reconnected"), "\(sent.stderr)")
        let result = listener.finish()
        #expect(result.status == 0)
        let received = try Self.messages(result.stdout)
        #expect(received.map(\.body) == [body])
        #expect(received.first?.connection == 2)
        #expect(result.stderr.contains("dropping the connection"))
        #expect(!result.stderr.contains("dropped: its sender's session ended"), "the same sender must resume")
    }

    @Test("listen survives a plain-format sender that dies mid-message and serves the next one")
    func listenSurvivesASenderDyingMidMessage() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--format", "legacy", "--json", "--connections", "2"])
        let killed = try scratch.send(["--format", "legacy", "--kill-after-bytes", "2000", try scratch.file("big", payload(50_000, seed: 2))])
        #expect(killed.status == 9)
        let next = try scratch.send(["--format", "legacy", try scratch.file("small", Array("next".utf8))])
        #expect(next.status == 0, "send: \(next.stderr)")
        let result = listener.finish()
        #expect(result.status == 0)
        #expect(try Self.messages(result.stdout).map(\.body) == [Array("next".utf8)])
        #expect(result.stderr.contains("inside a message"), "\(result.stderr)")
    }

    @Test("SIGTERM ends listen with exit 0 and removes its socket file")
    func terminationIsClean() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen([])
        #expect(FileManager.default.fileExists(atPath: scratch.socket))
        listener.process.terminate()
        let result = listener.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.socket))
    }

    @Test("send without a listener exits 1")
    func noListener() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try scratch.send([try scratch.file("x", [1, 2, 3])])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot connect"))
    }

    @Test("a missing input file exits 66 before connecting")
    func missingFile() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let result = try scratch.send([scratch.directory.appendingPathComponent("absent").path])
        #expect(result.status == 66)
        #expect(result.stderr.contains("cannot open"))
    }

    @Test("bad options exit 64", arguments: [
        ["send", "--link", "tcp:1"], ["send", "--link", "unix:/tmp/x", "--format", "xml"],
        ["send", "--link", "unix:/tmp/x", "--timeout", "0"], ["listen", "--link", "unix:/tmp/x", "--json", "--out-dir", "d"],
        ["listen", "--link", "unix:/tmp/x", "--profile", "hid"], ["send", "--link", "unix:/tmp/x", "--to", "AA:BB:CC:DD:EE:FF"],
    ])
    func badOptions(arguments: [String]) throws {
        let result = try MsgPipeProcess.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }

    @Test("a newline in a --format lines message exits 65")
    func newlineInLines() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--format", "lines", "--connections", "1"])
        let result = try scratch.send(["--format", "lines", try scratch.file("x", Array("two\nlines".utf8))])
        #expect(result.status == 65, "\(result.stderr)")
        _ = listener.finish()
    }

    @Test("a listener speaking another format or with a smaller maximum refuses the send: exit 3")
    func refusedByTheListener() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let legacy = try scratch.listen(["--format", "legacy", "--connections", "1"])
        let mismatch = try scratch.send([try scratch.file("x", [1])])
        #expect(mismatch.status == 3, "\(mismatch.stderr)")
        _ = legacy.finish()
        let small = try scratch.listen(["--max-message-size", "100", "--connections", "1"])
        let tooLarge = try scratch.send([try scratch.file("y", payload(101, seed: 1))])
        #expect(tooLarge.status == 3, "\(tooLarge.stderr)")
        _ = small.finish()
    }

    @Test("a listener that stops answering makes send exit 2 after --timeout")
    func timeout() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen([])
        kill(listener.process.processIdentifier, SIGSTOP)
        let result = try scratch.send(["--timeout", "1", try scratch.file("x", [1, 2, 3])])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("not every message was acknowledged before --timeout"), "\(result.stderr)")
        kill(listener.process.processIdentifier, SIGCONT)
        listener.process.terminate()
        _ = listener.finish()
    }
}
