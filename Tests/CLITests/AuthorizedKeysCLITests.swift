import Foundation
import Testing
import TestSupport

/// `listen`, `send` and `serve` with `--identity FILE --authorized-keys FILE` as processes over a UNIX socket:
/// only the listed phones are accepted, every message is sealed end to end, and each is named by its key.
@Suite("only known phones: authorized keys over a UNIX socket")
struct AuthorizedKeysCLITests {
    struct Keys {
        let directory: URL
        var socket: String { directory.appendingPathComponent("s.sock").path }
        var link: [String] { ["--link", "unix:" + socket] }
        var authorizedKeys: String { directory.appendingPathComponent("authorized_keys").path }
        let serverPublic: String
        let phones: [String: String]  // name -> public key text

        init(phones names: [String]) throws {
            directory = try makeScratchDirectory()
            serverPublic = try Self.keygen(directory.appendingPathComponent("server.id").path)
            var phones: [String: String] = [:]
            for name in names { phones[name] = try Self.keygen(directory.appendingPathComponent("\(name).id").path) }
            self.phones = phones
        }

        static func keygen(_ path: String) throws -> String {
            let result = try MsgPipeProcess.run(["keygen", "--x25519", "--out", path])
            #expect(result.status == 0, "keygen: \(result.stderr)")
            return String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func identity(_ name: String) -> String { directory.appendingPathComponent("\(name).id").path }

        /// Writes the authorized-keys file with `names` (in that order).
        func authorize(_ names: [String]) throws {
            let text = "# phones of this test\n" + names.map { "\(phones[$0]!) \($0)\n" }.joined()
            try text.write(toFile: authorizedKeys, atomically: true, encoding: .utf8)
        }

        func server(_ arguments: [String]) -> [String] {
            link + ["--identity", identity("server"), "--authorized-keys", authorizedKeys] + arguments
        }

        /// `send` as phone `name` (its key may be unknown to the listener).
        func send(as name: String, _ body: String) throws -> MsgPipeProcess.Result {
            let file = directory.appendingPathComponent("from-\(name)").path
            try Data(body.utf8).write(to: URL(fileURLWithPath: file))
            return try MsgPipeProcess.run(
                ["send"] + link + ["--identity", identity(name), "--peer-key", serverPublic, "--timeout", "20", file])
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    struct Line: Decodable {
        let data: String
        let peerKey: String?
        let peerName: String?
        var body: String { String(decoding: Data(base64Encoded: data) ?? Data(), as: UTF8.self) }

        enum CodingKeys: String, CodingKey {
            case data
            case peerKey = "peer_key"
            case peerName = "peer_name"
        }
    }

    static func lines(_ stdout: [UInt8]) throws -> [Line] {
        try String(decoding: stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(Line.self, from: Data($0.utf8))
        }
    }

    @Test("three phones with three keys into one listen --json, each named; a fourth, unknown key is refused")
    func threeKnownOneStranger() throws {
        let keys = try Keys(phones: ["till-1", "till-2", "till-3", "stranger"])
        defer { keys.remove() }
        try keys.authorize(["till-1", "till-2", "till-3"])
        let listener = try RunningMsgPipe(["listen"] + keys.server(["--json"]))
        #expect(listener.waitForError(containing: "listening on unix:"), "\(listener.stderrSoFar)")
        for name in ["till-1", "till-2", "till-3"] {
            let sent = try keys.send(as: name, "hello from \(name)")
            #expect(sent.status == 0, "\(name): \(sent.stderr)")
        }
        let refused = try keys.send(as: "stranger", "let me in")
        #expect(refused.status == 77, "stranger: \(refused.stderr)")
        #expect(refused.stderr.contains("not authenticated"), "\(refused.stderr)")
        #expect(listener.waitForError(containing: "refused"), "\(listener.stderrSoFar)")
        kill(listener.process.processIdentifier, SIGTERM)
        let result = listener.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Self.lines(result.stdout)
        #expect(lines.map(\.body) == ["hello from till-1", "hello from till-2", "hello from till-3"])
        #expect(lines.map(\.peerName) == ["till-1", "till-2", "till-3"])
        #expect(lines.map(\.peerKey) == ["till-1", "till-2", "till-3"].map { keys.phones[$0] })
        #expect(!String(decoding: result.stdout, as: UTF8.self).contains("let me in"))
        #expect(!result.stdout.isEmpty && !lines.contains { $0.body.contains("let me in") })
    }

    @Test("a phone without keys into a keyed listen: its send fails (never acknowledged), nothing is written")
    func keylessPhoneIsNeverAcknowledged() throws {
        let keys = try Keys(phones: ["till-1"])
        defer { keys.remove() }
        try keys.authorize(["till-1"])
        let listener = try RunningMsgPipe(["listen"] + keys.server(["--json"]))
        #expect(listener.waitForError(containing: "listening on unix:"), "\(listener.stderrSoFar)")
        let file = keys.directory.appendingPathComponent("plain").path
        try Data("pay 100 to mallory".utf8).write(to: URL(fileURLWithPath: file))
        let keyless = try MsgPipeProcess.run(["send"] + keys.link + ["--timeout", "8", "--reconnects", "1", file])
        #expect(keyless.status == 77, "a send nobody took must not exit 0: \(keyless.stderr)")
        #expect(keyless.stderr.contains("not authenticated"), "\(keyless.stderr)")
        #expect(listener.waitForError(containing: "refused"), "\(listener.stderrSoFar)")
        #expect(try keys.send(as: "till-1", "known").status == 0, "a known phone still delivers")
        kill(listener.process.processIdentifier, SIGTERM)
        let result = listener.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.lines(result.stdout).map(\.body) == ["known"])
    }

    @Test("--out-dir files each phone's messages in a directory named after its key")
    func outDirectoryPerKey() throws {
        let keys = try Keys(phones: ["till-1", "till-2"])
        defer { keys.remove() }
        try keys.authorize(["till-1", "till-2"])
        let inbox = keys.directory.appendingPathComponent("inbox").path
        let listener = try RunningMsgPipe(["listen"] + keys.server(["--out-dir", inbox]))
        #expect(listener.waitForError(containing: "listening on unix:"), "\(listener.stderrSoFar)")
        for (name, body) in [("till-1", "a"), ("till-2", "b"), ("till-1", "c")] {
            #expect(try keys.send(as: name, body).status == 0)
        }
        kill(listener.process.processIdentifier, SIGTERM)
        #expect(listener.finish().status == 0)
        func read(_ path: String) -> String? {
            FileManager.default.contents(atPath: inbox + "/" + path).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(read("till-1/00000001.msg") == "a")
        #expect(read("till-1/00000002.msg") == "c")
        #expect(read("till-2/00000001.msg") == "b")
        #expect(read("00000001.msg") == nil)
    }

    @Test("SIGHUP reloads the file: a removed phone is refused from then on, the others still deliver")
    func hangupRevokes() throws {
        let keys = try Keys(phones: ["till-1", "till-2"])
        defer { keys.remove() }
        try keys.authorize(["till-1", "till-2"])
        let listener = try RunningMsgPipe(["listen"] + keys.server(["--json"]))
        #expect(listener.waitForError(containing: "listening on unix:"), "\(listener.stderrSoFar)")
        #expect(try keys.send(as: "till-2", "before").status == 0)
        try keys.authorize(["till-1"])
        kill(listener.process.processIdentifier, SIGHUP)
        #expect(listener.waitForError(containing: "revoked till-2"), "\(listener.stderrSoFar)")
        let refused = try keys.send(as: "till-2", "after")
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(try keys.send(as: "till-1", "still here").status == 0)
        kill(listener.process.processIdentifier, SIGTERM)
        let result = listener.finish()
        let lines = try Self.lines(result.stdout)
        #expect(lines.map(\.body) == ["before", "still here"])
        #expect(lines.map(\.peerName) == ["till-2", "till-1"])
    }

    @Test("SIGHUP closes a removed phone's open session: what it sends afterwards is never written")
    func hangupClosesOpenSession() throws {
        let keys = try Keys(phones: ["till-1"])
        defer { keys.remove() }
        try keys.authorize(["till-1"])
        let listener = try RunningMsgPipe(["listen"] + keys.server(["--json"]))
        #expect(listener.waitForError(containing: "listening on unix:"), "\(listener.stderrSoFar)")
        let first = keys.directory.appendingPathComponent("first").path
        try Data("one".utf8).write(to: URL(fileURLWithPath: first))
        // The second message is standard input, read only when it is sent: the session stays open until then.
        let sender = Process()
        sender.executableURL = MsgPipeProcess.binary
        sender.arguments = ["send"] + keys.link
            + ["--identity", keys.identity("till-1"), "--peer-key", keys.serverPublic, "--timeout", "30", first, "-"]
        let input = Pipe()
        sender.standardInput = input
        sender.standardOutput = FileHandle.nullDevice
        sender.standardError = FileHandle.nullDevice
        try sender.run()
        #expect(listener.waitForError(containing: "authenticated as till-1"), "\(listener.stderrSoFar)")
        Thread.sleep(forTimeInterval: 1)  // the first message is written
        try keys.authorize([])
        kill(listener.process.processIdentifier, SIGHUP)
        #expect(listener.waitForError(containing: "revoked till-1"), "\(listener.stderrSoFar)")
        feed("two".utf8, to: input)
        sender.waitUntilExit()
        #expect(sender.terminationStatus != 0, "the second message was acknowledged")
        kill(listener.process.processIdentifier, SIGTERM)
        let result = listener.finish()
        #expect(try Self.lines(result.stdout).map(\.body) == ["one"], "\(result.stderr)")
    }

    @Test("a world-writable or missing key file, or a bad line, exits 78 before listening")
    func badKeyFiles() throws {
        let keys = try Keys(phones: ["till-1"])
        defer { keys.remove() }
        try keys.authorize(["till-1"])
        chmod(keys.authorizedKeys, 0o666)
        let open = try MsgPipeProcess.run(["listen"] + keys.server([]))
        #expect(open.status == 78)
        #expect(open.stderr.contains("is writable by every user"), "\(open.stderr)")
        #expect(!open.stderr.contains("listening on"))
        chmod(keys.authorizedKeys, 0o644)
        try "\(keys.phones["till-1"]!) till-1\nnot-a-key till-2\n".write(
            toFile: keys.authorizedKeys, atomically: true, encoding: .utf8)
        let bad = try MsgPipeProcess.run(["listen"] + keys.server([]))
        #expect(bad.status == 78)
        #expect(bad.stderr.contains("line 2:"), "\(bad.stderr)")
        let missing = try MsgPipeProcess.run(
            ["listen"] + keys.link + ["--identity", keys.directory.path + "/none.id", "--authorized-keys", keys.authorizedKeys])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("does not exist"), "\(missing.stderr)")
    }

    @Test("serve --authorized-keys answers a listed phone's request and refuses a stranger's")
    func serveAuthorized() throws {
        let keys = try Keys(phones: ["till-1", "stranger"])
        defer { keys.remove() }
        try keys.authorize(["till-1"])
        let server = try ServeProcess(keys.server(["--exec", "printf ok:; cat", "--state", keys.directory.path + "/state"]))
        func request(as name: String) throws -> MsgPipeProcess.Result {
            try MsgPipeProcess.run(
                ["request"] + keys.link + ["--identity", keys.identity(name), "--peer-key", keys.serverPublic,
                 "--timeout", "10"], input: Array("pay".utf8))
        }
        let good = try request(as: "till-1")
        let refused = try request(as: "stranger")
        let output = server.stop()
        #expect(good.status == 0, "\(good.stderr)\n\(output.stderr)")
        #expect(String(decoding: good.stdout, as: UTF8.self) == "ok:pay")
        #expect(refused.status == 6, "\(refused.stderr)\n\(output.stderr)")
    }

    @Test("SIGHUP reloads serve's file: a removed phone's request is refused from then on; SIGTERM: exit 0")
    func serveHangupRevokes() throws {
        let keys = try Keys(phones: ["till-1", "till-2"])
        defer { keys.remove() }
        try keys.authorize(["till-1", "till-2"])
        let server = try RunningMsgPipe(
            ["serve"] + keys.server(["--exec", "printf ok:; cat", "--state", keys.directory.path + "/state"]))
        #expect(server.waitForError(containing: "listening on unix:"), "\(server.stderrSoFar)")
        func request(as name: String) throws -> MsgPipeProcess.Result {
            try MsgPipeProcess.run(
                ["request"] + keys.link + ["--identity", keys.identity(name), "--peer-key", keys.serverPublic,
                 "--timeout", "10"], input: Array("pay".utf8))
        }
        #expect(try request(as: "till-2").status == 0)
        try keys.authorize(["till-1"])
        kill(server.process.processIdentifier, SIGHUP)
        #expect(server.waitForError(containing: "revoked till-2"), "\(server.stderrSoFar)")
        let refused = try request(as: "till-2")
        #expect(refused.status == 6, "\(refused.stderr)")
        #expect(try request(as: "till-1").status == 0)
        kill(server.process.processIdentifier, SIGTERM)
        let result = server.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keys.socket))
    }

    @Test("send as the peripheral to a central: the central pins the peripheral's key, the peripheral checks the central's")
    func peripheralSends() throws {
        let keys = try Keys(phones: ["till-1"])
        defer { keys.remove() }
        try keys.authorize(["till-1"])
        let file = keys.directory.appendingPathComponent("ticket").path
        try Data("ticket 42".utf8).write(to: URL(fileURLWithPath: file))
        let sender = try RunningMsgPipe(["send", "--role", "peripheral", "--timeout", "30"] + keys.server([file]))
        #expect(sender.waitForError(containing: "listening on unix:"), "\(sender.stderrSoFar)")
        let received = try MsgPipeProcess.run(
            ["listen", "--role", "central", "--json", "--count", "1"] + keys.link
                + ["--identity", keys.identity("till-1"), "--peer-key", keys.serverPublic])
        let sent = sender.finish()
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(received.status == 0, "\(received.stderr)")
        let lines = try Self.lines(received.stdout)
        #expect(lines.map(\.body) == ["ticket 42"])
        #expect(lines.map(\.peerKey) == [keys.serverPublic])
    }
}
