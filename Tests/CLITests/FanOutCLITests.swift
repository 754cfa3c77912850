import Foundation
import Testing

/// One central on several peers over UNIX sockets: `send --to A --to B ...` delivers every message to every
/// peer, a missing peer makes the delivery partial (exit 4) and is named, `listen --to A --to B` receives
/// from both; the rules of a repeated `--to` are usage errors.
@Suite("msgpipe send and listen with several --to")
struct FanOutCLITests {
    /// One `send --json` line.
    struct SentLine: Decodable {
        let index: Int
        let file: String
        let bytes: Int
        let peer: String?
    }

    /// One `listen --json` line.
    struct ReceivedLine: Decodable {
        let peer: String?
        let data: String
        var body: [UInt8] { [UInt8](Data(base64Encoded: data) ?? Data()) }
    }

    static func lines<T: Decodable>(_ stdout: [UInt8], as type: T.Type) throws -> [T] {
        try String(decoding: stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(T.self, from: Data($0.utf8))
        }
    }

    /// A scratch directory with a socket path per peer.
    struct Peers {
        let directory: URL
        init() throws { directory = try makeScratchDirectory() }
        func remove() { try? FileManager.default.removeItem(at: directory) }
        func socket(_ name: String) -> String { directory.appendingPathComponent(name + ".sock").path }
        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url.path
        }

        /// `listen --link unix:SOCKET --json --count N`, ready.
        func listen(_ name: String, count: Int) throws -> RunningMsgPipe {
            let listener = try RunningMsgPipe(["listen", "--link", "unix:" + socket(name), "--json", "--count", "\(count)"])
            #expect(listener.waitForError(containing: "listening on unix:"), "no ready line: \(listener.stderrSoFar)")
            return listener
        }
    }

    @Test("send --to three listeners: each gets every message intact, exit 0, one JSON line per peer and message")
    func threePeersGetEverything() throws {
        let peers = try Peers()
        defer { peers.remove() }
        let names = ["a", "b", "c"]
        let listeners = try names.map { try peers.listen($0, count: 2) }
        let bodies = [payload(150_000, seed: 41), payload(3_000, seed: 42)]
        let files = try bodies.enumerated().map { try peers.file("in\($0.offset)", $0.element) }
        let targets = names.flatMap { ["--to", "unix:" + peers.socket($0)] }
        let sent = try MsgPipeProcess.run(["send", "--json"] + targets + files)
        #expect(sent.status == 0, "\(sent.stderr)")
        for name in names {
            #expect(sent.stderr.contains("unix:\(peers.socket(name)): 2 of 2 messages acknowledged"), "\(sent.stderr)")
        }
        let lines = try Self.lines(sent.stdout, as: SentLine.self)
        #expect(lines.count == 6)
        for name in names {
            let mine = lines.filter { $0.peer == "unix:" + peers.socket(name) }
            #expect(mine.map(\.index) == [1, 2], "\(name): \(mine)")
            #expect(mine.map(\.bytes) == bodies.map(\.count))
        }
        for listener in listeners {
            let result = listener.finish()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Self.lines(result.stdout, as: ReceivedLine.self).map(\.body) == bodies)
        }
    }

    @Test("a peer that is not there: the others get everything, exit 4 names it, --json has the others' lines")
    func anAbsentPeerMakesThePartialExitCode() throws {
        let peers = try Peers()
        defer { peers.remove() }
        let listeners = try ["a", "b"].map { try peers.listen($0, count: 1) }
        let body = payload(80_000, seed: 43)
        let missing = "unix:" + peers.socket("missing")
        let sent = try MsgPipeProcess.run(
            ["send", "--json", "--to", "unix:" + peers.socket("a"), "--to", missing, "--to", "unix:" + peers.socket("b"),
             try peers.file("one", body)])
        #expect(sent.status == 4, "\(sent.stderr)")
        #expect(sent.stderr.contains("partial delivery: \(missing) did not acknowledge every message"), "\(sent.stderr)")
        #expect(sent.stderr.contains("\(missing): 0 of 1 messages acknowledged, then failed (exit code 1)"), "\(sent.stderr)")
        let lines = try Self.lines(sent.stdout, as: SentLine.self)
        #expect(Set(lines.compactMap(\.peer)) == ["unix:" + peers.socket("a"), "unix:" + peers.socket("b")])
        #expect(lines.count == 2)
        for listener in listeners {
            let result = listener.finish()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Self.lines(result.stdout, as: ReceivedLine.self).map(\.body) == [body])
        }
    }

    @Test("no peer reachable: not partial, the failure's own exit code")
    func noPeerReachable() throws {
        let peers = try Peers()
        defer { peers.remove() }
        let sent = try MsgPipeProcess.run(
            ["send", "--to", "unix:" + peers.socket("x"), "--to", "unix:" + peers.socket("y"), try peers.file("m", [1, 2, 3])])
        #expect(sent.status == 1, "\(sent.stderr)")
        #expect(!sent.stderr.contains("partial delivery"))
    }

    /// `send --role peripheral` on each socket, ready.
    static func peripheralSend(_ peers: Peers, _ name: String, _ arguments: [String]) throws -> RunningMsgPipe {
        let sender = try RunningMsgPipe(["send", "--role", "peripheral", "--link", "unix:" + peers.socket(name)] + arguments)
        #expect(sender.waitForError(containing: "listening on unix:"), "no ready line: \(sender.stderrSoFar)")
        return sender
    }

    @Test("listen --to two peripherals: every message of each, --json's peer says which")
    func listenToTwoPeers() throws {
        let peers = try Peers()
        defer { peers.remove() }
        let first = payload(120_000, seed: 44)
        let second = payload(5_000, seed: 45)
        let senders = [
            try Self.peripheralSend(peers, "a", [try peers.file("first", first)]),
            try Self.peripheralSend(peers, "b", [try peers.file("second", second)]),
        ]
        let received = try MsgPipeProcess.run(
            ["listen", "--json", "--count", "2", "--to", "unix:" + peers.socket("a"), "--to", "unix:" + peers.socket("b")])
        #expect(received.status == 0, "\(received.stderr)")
        let lines = try Self.lines(received.stdout, as: ReceivedLine.self)
        #expect(lines.count == 2)
        #expect(lines.first { $0.peer == "unix:" + peers.socket("a") }?.body == first)
        #expect(lines.first { $0.peer == "unix:" + peers.socket("b") }?.body == second)
        for sender in senders { #expect(sender.finish().status == 0) }
    }

    @Test("listen --to two peripherals with --out-dir: a folder per peer")
    func listenToTwoPeersIntoFolders() throws {
        let peers = try Peers()
        defer { peers.remove() }
        let first = payload(40_000, seed: 46)
        let second = payload(7_000, seed: 47)
        let senders = [
            try Self.peripheralSend(peers, "a", [try peers.file("first", first)]),
            try Self.peripheralSend(peers, "b", [try peers.file("second", second)]),
        ]
        let inbox = peers.directory.appendingPathComponent("inbox").path
        let received = try MsgPipeProcess.run(
            ["listen", "--out-dir", inbox, "--count", "2", "--to", "unix:" + peers.socket("a"),
             "--to", "unix:" + peers.socket("b")])
        #expect(received.status == 0, "\(received.stderr)")
        func folder(_ name: String) -> String {
            inbox + "/" + ("unix:" + peers.socket(name)).map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" }
                .map(String.init).joined()
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder("a") + "/00000001.msg")) == Data(first))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder("b") + "/00000001.msg")) == Data(second))
        for sender in senders { #expect(sender.finish().status == 0) }
    }

    @Test("bench --to two listeners: a report per peer, then the aggregate")
    func benchTwoPeers() throws {
        let peers = try Peers()
        defer { peers.remove() }
        let listeners = try ["a", "b"].map { try peers.listen($0, count: 2) }
        let result = try MsgPipeProcess.run(
            ["bench", "--json", "--size", "50000", "--messages", "2", "--to", "unix:" + peers.socket("a"),
             "--to", "unix:" + peers.socket("b")])
        #expect(result.status == 0, "\(result.stderr)")
        let reports = try String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
        try #require(reports.count == 3, "\(reports)")
        #expect(reports.prefix(2).compactMap { $0["peer"] as? String } == ["a", "b"].map { "unix:" + peers.socket($0) })
        #expect(reports.allSatisfy { $0["completed"] as? Bool == true })
        #expect(reports[2]["payload_bytes"] as? Int == 200_000)
        for listener in listeners { #expect(listener.finish().status == 0) }
    }

    /// Each rule of a repeated `--to`, and words of its message.
    static let badInputs: [([String], String)] = {
        let eight: [String] = (1 ... 8).flatMap { number -> [String] in ["--to", "unix:/tmp/p\(number)"] }
        let eightNames: [String] = (1 ... 8).flatMap { number -> [String] in ["--to", "door\(number)"] }
        var cases: [([String], String)] = []
        cases.append((["send", "--to", "unix:/tmp/a", "--to", "unix:/tmp/a", "/dev/null"], "the same peer twice"))
        cases.append((["listen", "--to", "AA:BB:CC:DD:EE:FF", "--to", "aa:bb:cc:dd:ee:ff/random"], "the same peer twice"))
        cases.append((["send"] + eight + ["/dev/null"], "at most 7 peers"))
        cases.append((["listen"] + eightNames, "at most 7 peers"))
        cases.append((["send", "--to", "door", "--to", "hall", "--role", "peripheral", "/dev/null"], "not with --role peripheral"))
        cases.append((["listen", "--to", "door", "--to", "hall", "--role", "peripheral"], "not with --role peripheral"))
        cases.append((["send", "--to", "door", "--to", "hall", "--name", "kiosk", "/dev/null"], "exclude each other"))
        cases.append((["send", "--to", "unix:/tmp/a", "--to", "door", "/dev/null"], "exclude each other"))
        cases.append((["send", "--to", "unix:/tmp/a", "--to", "unix:/tmp/b", "--identity", "/tmp/x.id", "--peer-key",
                       "msgpipe-x25519-public:00", "/dev/null"], "end-to-end keys pin one peer"))
        cases.append((["listen", "--to", "unix:/tmp/a", "--to", "unix:/tmp/b", "--key-file", "/tmp/x.key"],
                      "end-to-end keys pin one peer"))
        cases.append((["send", "--to", "unix:/tmp/a", "--to", "unix:/tmp/b", "--mqtt", "mqtt://localhost/f", "--state", "/tmp/s"],
                      "--mqtt sends its downlink to one peer"))
        cases.append((["request", "--to", "unix:/tmp/a", "--to", "unix:/tmp/b", "--key-file", "/tmp/x.key", "/dev/null"],
                      "give --to once"))
        cases.append((["bench", "--to", "unix:/tmp/a", "--to", "unix:/tmp/a"], "the same peer twice"))
        cases.append((["bench", "--to", "unix:/tmp/a", "--to", "unix:/tmp/b", "--centrals", "2"], "one central to each"))
        return cases
    }()

    @Test("the rules of a repeated --to are usage errors (exit 64) that name the rule", arguments: badInputs)
    func repeatedToRules(arguments: [String], rule: String) throws {
        let result = try MsgPipeProcess.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(rule), "\(arguments): \(result.stderr)")
    }
}
