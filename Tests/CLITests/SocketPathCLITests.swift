import Foundation
import Glibc
import Testing

/// `listen` and `serve` on `--link unix:PATH` take PATH over only from a dead listener: a live one answering
/// there is refused (exit 1), a stale socket file is replaced.
@Suite("msgpipe listen and serve refuse a live listener's socket path")
struct SocketPathCLITests {
    @Test("a second listen on a live listener's path exits 1 naming the path; the first still receives")
    func secondListenerIsRefused() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let first = try scratch.listen(["--json", "--connections", "1"])
        let second = try RunningMsgPipe(["listen"] + scratch.link + ["--connections", "1"]).finish()
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("unix:\(scratch.socket)"), "\(second.stderr)")
        #expect(second.stderr.contains("another listener is running there"), "\(second.stderr)")
        #expect(FileManager.default.fileExists(atPath: scratch.socket), "the refused listener removed the socket")
        let sent = try scratch.send([try scratch.file("m", Array("still here".utf8))])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let result = first.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let received = try ListenSendCLITests.messages(result.stdout)
        #expect(received.map(\.body) == [Array("still here".utf8)])
        #expect(received.map(\.connection) == [1], "the probe counted as a connection")
    }

    @Test("a stale socket file (its listener gone) is replaced: listen works and receives")
    func staleSocketIsReplaced() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        try Self.leaveStaleSocket(at: scratch.socket)
        #expect(FileManager.default.fileExists(atPath: scratch.socket))
        let listener = try scratch.listen(["--json", "--connections", "1"])
        let sent = try scratch.send([try scratch.file("m", Array("after a crash".utf8))])
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let result = listener.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try ListenSendCLITests.messages(result.stdout).map(\.body) == [Array("after a crash".utf8)])
    }

    @Test("a file at PATH that is not a socket is left alone: listen exits 1")
    func regularFileIsKept() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: scratch.socket))
        let result = try RunningMsgPipe(["listen"] + scratch.link).finish()
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("not a socket"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.socket)) == Data("keep me".utf8))
    }

    @Test("a second serve on a live server's path exits 1 naming the path; the first still answers")
    func secondServerIsRefused() throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let key = scratch.directory.appendingPathComponent("key").path
        #expect(try MsgPipeProcess.run(["keygen", "--out", key]).status == 0)
        let options = scratch.link + ["--key-file", key, "--exec", "printf pong:; cat"]
        let first = try ServeProcess(options)
        let second = try RunningMsgPipe(["serve"] + options).finish()
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("unix:\(scratch.socket)"), "\(second.stderr)")
        #expect(second.stderr.contains("another listener is running there"), "\(second.stderr)")
        try Self.expectPong(from: scratch.link, key: key)
        _ = first.stop()
    }

    @Test("a second serve on a live server's --state directory exits 1 naming it; the first still answers")
    func secondServerOnTheSameStateIsRefused() throws {
        let scratch = try ListenSendCLITests.Scratch()
        let other = try ListenSendCLITests.Scratch()
        defer { scratch.remove(); other.remove() }
        let state = scratch.directory.appendingPathComponent("state").path
        let key = scratch.directory.appendingPathComponent("key").path
        #expect(try MsgPipeProcess.run(["keygen", "--out", key]).status == 0)
        let options = ["--key-file", key, "--state", state, "--exec", "printf pong:; cat"]
        let first = try ServeProcess(scratch.link + options)
        let second = try RunningMsgPipe(["serve"] + other.link + options).finish()
        #expect(second.status == 1, "\(second.stderr)")
        #expect(second.stderr.contains("\(state) is in use by another msgpipe serve"), "\(second.stderr)")
        try Self.expectPong(from: scratch.link, key: key)
        _ = first.stop()
    }

    /// `msgpipe request ping` on `link` gets the answer of a serve running `printf pong:; cat`.
    static func expectPong(from link: [String], key: String) throws {
        let answer = try MsgPipeProcess.run(["request"] + link + ["--key-file", key, "--timeout", "10"], input: Array("ping".utf8))
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(String(decoding: answer.stdout, as: UTF8.self) == "pong:ping")
    }

    /// Binds and listens on a SEQPACKET socket at `path`, then closes it without unlinking: what a listener
    /// killed with SIGKILL leaves behind.
    static func leaveStaleSocket(at path: String) throws {
        let fd = try UnixSeqPacketSocket.open(.bind, path: path)
        defer { close(fd) }
        try #require(listen(fd, 1) == 0)
    }
}
