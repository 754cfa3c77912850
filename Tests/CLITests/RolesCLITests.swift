import Foundation
import Glibc
import Testing
import TestSupport

/// The roles independent of the direction, over `--link unix:PATH`: `send --role peripheral` serves the
/// service and sends to the central that subscribes; `listen --role central` connects, subscribes and
/// receives. Also the seeds' own GATT layouts (`--profile custom:...`) both ways.
@Suite("msgpipe send as peripheral and listen as central")
struct RolesCLITests {
    typealias Scratch = ListenSendCLITests.Scratch

    static let fff0 = "custom:FFF0:FFF2:FFF1"
    static let qx = "custom:68753A44-4D6F-1226-9C60-0050E4C00000:68753A44-4D6F-1226-9C60-0050E4C22222:68753A44-4D6F-1226-9C60-0050E4C11111"

    /// Starts `msgpipe send --role peripheral` on the socket and waits for its ready line.
    static func peripheralSend(_ scratch: Scratch, _ arguments: [String]) throws -> RunningMsgPipe {
        let sender = try RunningMsgPipe(["send", "--role", "peripheral"] + scratch.link + arguments)
        #expect(sender.waitForError(containing: "listening on unix:"), "no ready line: \(sender.stderrSoFar)")
        return sender
    }

    /// Runs `msgpipe listen --role central` against the socket to its end.
    static func centralListen(_ scratch: Scratch, _ arguments: [String]) throws -> MsgPipeProcess.Result {
        try MsgPipeProcess.run(["listen", "--role", "central"] + scratch.link + arguments)
    }

    @Test("a peripheral sends 1 MiB to the central that subscribed: byte-identical, both exit 0")
    func peripheralSendsOneMebibyte() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let big = payload(1 << 20, seed: 31)
        let sender = try Self.peripheralSend(scratch, [try scratch.file("big", big)])
        let received = try Self.centralListen(scratch, ["--count", "1"])
        #expect(received.status == 0, "listen: \(received.stderr)")
        #expect(received.stdout.count == big.count)
        expectSameBytes(received.stdout, big, "the 1 MiB message")
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.socket), "the peripheral removes its socket")
    }

    @Test("Transport runs peripheral to central over every profile; standard input is a message", arguments: ["msgpipe", "nus", fff0])
    func transportOverEveryProfile(profile: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let bodies = [payload(70_000, seed: 3), Array("from standard input".utf8)]
        let sender = try RunningMsgPipe(
            ["send", "--role", "peripheral", "--profile", profile] + scratch.link + [try scratch.file("a", bodies[0]), "-"],
            input: bodies[1])
        #expect(sender.waitForError(containing: "listening on unix:"), "no ready line: \(sender.stderrSoFar)")
        let received = try Self.centralListen(scratch, ["--profile", profile, "--json", "--count", "2"])
        #expect(received.status == 0, "listen: \(received.stderr)")
        let messages = try ListenSendCLITests.messages(received.stdout)
        #expect(messages.map(\.body) == bodies)
        #expect(messages.map(\.id) == [1, 2])
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
    }

    @Test("plain formats from a peripheral arrive whole and in order at the central", arguments: ["legacy", "lines", "eom"])
    func plainFormatsFromAPeripheral(format: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let bodies: [[UInt8]] = [Array("first".utf8), payload(40_000, seed: 5).map { $0 == 0x0A ? 0x20 : $0 }, Array("last".utf8)]
        let files = try bodies.enumerated().map { try scratch.file("in\($0.offset)", $0.element) }
        let sender = try Self.peripheralSend(scratch, ["--format", format] + files)
        let received = try Self.centralListen(scratch, ["--format", format, "--json", "--count", "3"])
        #expect(received.status == 0, "listen: \(received.stderr)")
        let messages = try ListenSendCLITests.messages(received.stdout)
        #expect(messages.map(\.body) == bodies)
        #expect(messages.map(\.id) == [nil, nil, nil])
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
    }

    /// (profile, the peripheral sends): the seeds' layouts with the legacy Start/End format, both directions.
    static let customCases: [(String, Bool)] = [fff0, qx].flatMap { profile in [(profile, true), (profile, false)] }

    @Test("custom profiles FFF0 and QX carry the legacy format both ways", arguments: customCases)
    func customProfilesBothWays(profile: String, peripheralSends: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let options = ["--profile", profile, "--format", "legacy"]
        let body = payload(20_000, seed: 17)
        let file = try scratch.file("body", body)
        let sent: MsgPipeProcess.Result
        let received: MsgPipeProcess.Result
        if peripheralSends {
            let sender = try Self.peripheralSend(scratch, options + ["--json", file])
            received = try Self.centralListen(scratch, options + ["--count", "1"])
            sent = sender.finish()
        } else {
            let listener = try scratch.listen(options + ["--connections", "1"])
            sent = try scratch.send(options + ["--json", file])
            received = listener.finish()
        }
        #expect(sent.status == 0, "send: \(sent.stderr)")
        #expect(received.status == 0, "listen: \(received.stderr)")
        expectSameBytes(received.stdout, body)
        #expect(String(decoding: sent.stdout, as: UTF8.self).contains("\"bytes\":20000"))
    }

    @Test("a central that drops mid-message reconnects and gets the message exactly once")
    func droppedCentralReconnects() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let body = payload(500_000, seed: 23)
        let sender = try Self.peripheralSend(scratch, [try scratch.file("body", body)])
        let received = try Self.centralListen(
            scratch, ["--json", "--count", "1", "--verbose", "--drop-after-bytes", "300000"])
        #expect(received.status == 0, "listen: \(received.stderr)")
        #expect(received.stderr.contains("dropping the connection"), "\(received.stderr)")
        #expect(received.stderr.contains("reconnected"), "\(received.stderr)")
        let messages = try ListenSendCLITests.messages(received.stdout)
        #expect(messages.map(\.body) == [body])
        #expect(messages.first?.connection == 2)
        #expect(messages.first?.id == 1)
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
    }

    @Test("a central that looks at the services and leaves before subscribing takes no place: the next one gets the plain message",
          arguments: ["legacy", "msgpipe"])
    func browsingCentralTakesNoPlace(format: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let body = Array("for the central that subscribes".utf8)
        let sender = try Self.peripheralSend(scratch, ["--format", format, "--timeout", "30", try scratch.file("x", body)])
        let answer = try Self.browseAndLeave(scratch.socket)
        #expect(answer.first == 0x11, "a Read By Group Type Response: \(answer)")
        let received = try Self.centralListen(scratch, ["--format", format, "--count", "1"])
        #expect(received.status == 0, "listen: \(received.stderr)")
        expectSameBytes(received.stdout, body)
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
    }

    /// A central that only browses: connects, reads the primary services (ATT Read By Group Type) and leaves
    /// without subscribing. Returns the answer PDU.
    static func browseAndLeave(_ path: String) throws -> [UInt8] {
        let fd = try UnixSeqPacketSocket.open(.connect, path: path)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request: [UInt8] = [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]  // Read By Group Type, primary services
        try #require(request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == request.count)
        var answer = [UInt8](repeating: 0, count: 600)
        let count = answer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        try #require(count > 0, "no answer: errno \(errno)")
        return Array(answer.prefix(count))
    }

    @Test("a central without --count keeps reconnecting after its peripheral left, until SIGTERM: exit 0")
    func centralRunsUntilTerminated() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let body = payload(30_000, seed: 41)
        let sender = try Self.peripheralSend(scratch, [try scratch.file("body", body)])
        let listener = try RunningMsgPipe(["listen", "--role", "central", "--verbose"] + scratch.link)
        let sent = sender.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
        #expect(listener.waitForError(containing: "reconnect attempt 2 failed"), "\(listener.stderrSoFar)")
        listener.process.terminate()
        let received = listener.finish()
        #expect(received.status == 0, "listen: \(received.stderr)")
        expectSameBytes(received.stdout, body)
    }

    @Test("listen --count ends the peripheral listener after N messages and the sender still exits 0")
    func peripheralListenerCount() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let listener = try scratch.listen(["--json", "--count", "2"])
        let files = try ["one", "two"].map { try scratch.file($0, Array($0.utf8)) }
        let sent = try scratch.send(files)
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let result = listener.finish()
        #expect(result.status == 0, "listen: \(result.stderr)")
        #expect(try ListenSendCLITests.messages(result.stdout).map(\.body) == [Array("one".utf8), Array("two".utf8)])
        #expect(!FileManager.default.fileExists(atPath: scratch.socket))
    }

    @Test("a central speaking another format than the peripheral's info says exits 1")
    func centralRefusesAnotherFormat() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let sender = try Self.peripheralSend(scratch, ["--timeout", "2", try scratch.file("x", [1, 2, 3])])
        let received = try Self.centralListen(scratch, ["--format", "legacy", "--count", "1"])
        #expect(received.status == 1, "\(received.stderr)")
        #expect(received.stderr.contains("does not speak --format legacy"), "\(received.stderr)")
        sender.process.terminate()
        _ = sender.finish()
    }

    @Test("a peripheral no central subscribes to exits 2 after --timeout; a central without a peripheral exits 1")
    func nobodyOnTheOtherSide() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let sender = try Self.peripheralSend(scratch, ["--timeout", "1", try scratch.file("x", [1])])
        #expect(sender.finish().status == 2)
        let received = try Self.centralListen(scratch, ["--count", "1"])
        #expect(received.status == 1)
        #expect(received.stderr.contains("cannot connect"), "\(received.stderr)")
    }

    @Test("contradicting roles and bad values are usage errors (exit 64)", arguments: [
        ["send", "--to", "AA:BB:CC:DD:EE:FF", "--role", "peripheral"],
        ["send", "--name", "term", "--role", "central"],
        ["listen", "--to", "AA:BB:CC:DD:EE:FF", "--role", "peripheral"],
        ["listen", "--to", "AA:BB:CC:DD:EE:FF", "--name", "term"],
        ["listen", "--name", "term", "--role", "central"],
        ["listen", "--to", "AA:BB:CC:DD:EE:FF", "--connections", "2"],
        ["listen", "--link", "unix:/tmp/x", "--role", "central", "--connections", "1"],
        ["listen", "--link", "unix:/tmp/x", "--count", "0"],
        ["send", "--link", "unix:/tmp/x", "--role", "sideways"],
        ["send", "--link", "unix:/tmp/x", "--profile", "custom:FFF0:FFF2"],
        ["listen", "--link", "unix:/tmp/x", "--profile", "custom:FFF0:FFF2:FFF2"],
        ["listen", "--link", "unix:/tmp/x", "--profile", "custom:FFF0:XYZW:FFF1"],
    ])
    func usageErrors(arguments: [String]) throws {
        let result = try MsgPipeProcess.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
}
