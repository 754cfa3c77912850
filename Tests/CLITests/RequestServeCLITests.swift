import Foundation
import Glibc
import Testing

/// `msgpipe keygen`, `request` and `serve` as real processes over the unix link.
@Suite("msgpipe request and serve over the unix link", .serialized)
struct RequestServeCLITests {
    let directory: String
    var socket: String { directory + "/socket" }
    var log: String { directory + "/ran" }
    var key: String { directory + "/key" }
    var state: String { directory + "/state" }
    /// Appends a line to the log, then answers "receipt:" + the request.
    var command: String { "echo ran >> \(log); printf receipt:; cat" }

    init() throws {
        directory = NSTemporaryDirectory() + "msgpipe-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keygen = try MsgPipeProcess.run(["keygen", "--out", key])
        #expect(keygen.status == 0)
    }

    func serve(_ extra: [String] = [], command: String? = nil, key: String? = nil) throws -> ServeProcess {
        try ServeProcess(
            ["--link", "unix:\(socket)", "--key-file", key ?? self.key, "--exec", command ?? self.command,
             "--state", state, "--json"] + extra)
    }

    func request(_ body: String, id: String? = nil, key: String? = nil, extra: [String] = []) throws -> MsgPipeProcess.Result {
        try MsgPipeProcess.run(
            ["request", "--link", "unix:\(socket)", "--key-file", key ?? self.key, "--timeout", "10"]
                + (id.map { ["--id", $0] } ?? []) + extra,
            input: Array(body.utf8))
    }

    var runs: Int {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    @Test("a request gets the command's output; a random id is printed to stderr")
    func roundTrip() throws {
        let server = try serve()
        let result = try request("12.50")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self) == "receipt:12.50")
        #expect(result.stderr.contains("request id: "))
        let output = server.stop()
        #expect(output.stdout.contains("\"status\":\"ok\""))
        #expect(runs == 1)
    }

    @Test("pinned X25519 identities: keygen --x25519 on both sides, then a request")
    func identities() throws {
        let serverKey = try MsgPipeProcess.run(["keygen", "--x25519", "--out", directory + "/server.id"])
        let clientKey = try MsgPipeProcess.run(["keygen", "--x25519", "--out", directory + "/client.id"])
        let serverPublic = String(decoding: serverKey.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let clientPublic = String(decoding: clientKey.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(serverPublic.hasPrefix("msgpipe-x25519-public:"))
        let server = try ServeProcess(
            ["--link", "unix:\(socket)", "--identity", directory + "/server.id", "--peer-key", clientPublic,
             "--exec", command, "--state", state])
        let good = try MsgPipeProcess.run(
            ["request", "--link", "unix:\(socket)", "--identity", directory + "/client.id", "--peer-key", serverPublic],
            input: Array("hi".utf8))
        #expect(good.status == 0, "\(good.stderr)")
        #expect(String(decoding: good.stdout, as: UTF8.self) == "receipt:hi")
        _ = try MsgPipeProcess.run(["keygen", "--x25519", "--out", directory + "/stranger.id"])
        let refused = try MsgPipeProcess.run(
            ["request", "--link", "unix:\(socket)", "--identity", directory + "/stranger.id", "--peer-key", serverPublic,
             "--timeout", "10", "--verbose"],
            input: Array("hi".utf8))
        let output = server.stop()
        #expect(refused.status == 6, "\(refused.stderr)\n\(output.stderr)")
        #expect(runs == 1)
    }

    @Test("idempotency across kill -9: the retried id gets the same response and the command ran once")
    func killNineAfterResponse() throws {
        var server = try serve()
        let first = try request("pay 12.50", id: "order-1")
        #expect(first.status == 0, "\(first.stderr)")
        _ = server.stop(signal: SIGKILL)
        server = try serve()
        let retry = try request("pay 12.50", id: "order-1")
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stdout == first.stdout)
        let output = server.stop()
        #expect(output.stdout.contains("\"fromJournal\":true"))
        #expect(runs == 1)
    }

    @Test("kill -9 while the command runs: the retry is answered outcome-unknown (exit 7), never run twice")
    func killNineDuringCommand() throws {
        let fifo = directory + "/started"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The command drops serve's stderr so the orphan left by kill -9 does not hold the test's pipe open.
        var server = try serve(command: "exec 2>/dev/null; echo ran >> \(log); echo started > \(fifo); sleep 30; cat")
        let pending = Thread { _ = try? self.request("pay 3.00", id: "order-2") }
        pending.start()
        // Opening the FIFO blocks until the command has started and writes to it.
        let started = FileHandle(forReadingAtPath: fifo)
        #expect(started?.readDataToEndOfFile() == Data("started\n".utf8))
        _ = server.stop(signal: SIGKILL)
        server = try serve()
        let retry = try request("pay 3.00", id: "order-2")
        #expect(retry.status == 7, "\(retry.stderr)")
        _ = server.stop()
        #expect(runs == 1)
    }

    @Test("a wrong pre-shared key: exit 6 'not authenticated' and the command never ran")
    func wrongKey() throws {
        let server = try serve()
        let otherKey = directory + "/other"
        _ = try MsgPipeProcess.run(["keygen", "--out", otherKey])
        let result = try request("pay 1.00", key: otherKey)
        #expect(result.status == 6)
        #expect(result.stderr.contains("not authenticated"))
        let output = server.stop()
        #expect(output.stdout.contains("handshake-failed"))
        #expect(runs == 0)
    }

    @Test("a tampered request is refused (exit 5), counted by serve, and the command never ran")
    func tampered() throws {
        let server = try serve()
        let result = try request("pay 9.99", extra: ["--inject", "tamper"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("tampered"))
        let output = server.stop()
        #expect(output.stdout.contains("\"event\":\"rejected\""))
        #expect(output.stdout.contains("authentication failed (tampered)"))
        #expect(runs == 0)
    }

    @Test("a replayed sealed request is refused (exit 5) and the command ran only for the original")
    func replayed() throws {
        let server = try serve()
        let result = try request("pay 4.00", extra: ["--inject", "replay"])
        #expect(result.status == 5, "\(result.stderr)")
        #expect(result.stderr.contains("replayed"))
        let output = server.stop()
        #expect(output.stdout.contains("rejected: replayed"))
        #expect(runs == 1)
    }

    @Test("the same id with another body is refused (exit 5) without running the command")
    func idReuse() throws {
        let server = try serve()
        #expect(try request("pay 1.00", id: "order-3").status == 0)
        let reused = try request("pay 1000.00", id: "order-3")
        #expect(reused.status == 5)
        _ = server.stop()
        #expect(runs == 1)
    }

    @Test("a central that connects and stays silent is dropped after --handshake-timeout; the next one is served")
    func silentCentral() throws {
        let server = try serve(["--handshake-timeout", "1"])
        let silent = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: socket.utf8.prefix(path.count - 1))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(silent, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(connected == 0)
        let result = try request("after the silent one")
        #expect(result.status == 0, "\(result.stderr)")
        // serve closes the silent connection once its second passed (not only when it stops): EOF within 10 s.
        var descriptor = pollfd(fd: silent, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 10_000) == 1, "serve kept the silent connection open")
        var byte: UInt8 = 0
        #expect(recv(silent, &byte, 1, 0) <= 0, "the silent central got data, not the end of its connection")
        let output = server.stop()
        #expect(output.stdout.contains("\"event\":\"handshake-failed\""))
    }

    @Test("SIGTERM as soon as serve listens: exit 0, stopped, its socket file removed; SIGINT likewise")
    func terminationRightAfterStart() throws {
        for signal in [SIGTERM, SIGINT] {
            let server = try serve()
            #expect(FileManager.default.fileExists(atPath: socket))
            let stopped = server.stop(signal: signal)
            #expect(stopped.status == 0, "\(stopped.stderr)")
            #expect(stopped.stderr.contains("stopped"), "\(stopped.stderr)")
            #expect(!FileManager.default.fileExists(atPath: socket))
        }
    }

    @Test("no response before --timeout: exit 4; a failing command: exit 3; no server: exit 2")
    func deadlinesAndFailures() throws {
        let slow = try serve(command: "sleep 20")
        let timedOut = try MsgPipeProcess.run(
            ["request", "--link", "unix:\(socket)", "--key-file", key, "--timeout", "1"], input: [])
        #expect(timedOut.status == 4, "\(timedOut.stderr)")
        let stopped = slow.stop(signal: SIGTERM)
        #expect(stopped.status == 0, "\(stopped.stderr)")

        let failing = try serve(command: "echo declined; exit 3")
        let failed = try request("x")
        #expect(failed.status == 3)
        #expect(String(decoding: failed.stdout, as: UTF8.self) == "declined\n")
        _ = failing.stop()

        let nobody = try request("x")
        #expect(nobody.status == 2, "\(nobody.stderr)")
    }
}
