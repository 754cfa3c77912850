import Foundation
import Testing

/// `send --spool DIR`: a durable queue that `send` delivers in order, keeping each message until it is acknowledged.
@Suite("send --spool")
struct SpoolCLITests {
    typealias Scratch = ListenSendCLITests.Scratch

    @Test("queued while the listener is away, delivered once it comes back; the spool is then empty")
    func deliversWhenThePeerComesBack() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let spool = scratch.directory.appendingPathComponent("spool").path
        let inbox = scratch.directory.appendingPathComponent("inbox").path
        let one = try scratch.file("one", Array("first".utf8))
        let two = try scratch.file("two", (0 ..< 200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(try MsgPipeProcess.run(["send", "--spool", spool, "--queue-only", one]).status == 0)
        // No listener yet: send waits and reconnects until it comes.
        let sending = try RunningMsgPipe(["send", "--spool", spool, "--reconnects", "30", "--json"] + scratch.link + [two])
        Thread.sleep(forTimeInterval: 1.5)
        #expect(sending.process.isRunning, "send gave up before the listener came: \(sending.stderrSoFar)")
        let listener = try scratch.listen(["--out-dir", inbox])
        let sent = sending.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
        let lines = String(decoding: sent.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("\"spool_id\":1") && lines[1].contains("\"spool_id\":2"), "\(lines)")
        listener.process.terminate()
        _ = listener.finish()
        #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/00000001.msg")) == Data("first".utf8))
        #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/00000002.msg")) == Data(contentsOf: URL(fileURLWithPath: two)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".msg") }.isEmpty)
    }

    @Test("with --key-file: delivered sealed; to a listener with another key: exit 77 at once, the spool keeps it")
    func sealedSpool() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let spool = scratch.directory.appendingPathComponent("spool").path
        let inbox = scratch.directory.appendingPathComponent("inbox").path
        let ours = scratch.directory.appendingPathComponent("ours.key").path
        let theirs = scratch.directory.appendingPathComponent("theirs.key").path
        for key in [ours, theirs] { #expect(try MsgPipeProcess.run(["keygen", "--out", key]).status == 0) }
        let file = try scratch.file("m", Array("sealed reading".utf8))

        let stranger = try scratch.listen(["--out-dir", inbox, "--key-file", theirs])
        let refused = try MsgPipeProcess.run(["send", "--spool", spool, "--reconnects", "30", "--key-file", ours] + scratch.link + [file])
        stranger.process.terminate()
        _ = stranger.finish()
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderr.contains("1 messages stay queued: not authenticated"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".msg") } == ["0000000001.msg"])

        let listener = try scratch.listen(["--out-dir", inbox, "--key-file", ours])
        let sent = try MsgPipeProcess.run(["send", "--spool", spool, "--key-file", ours] + scratch.link)
        listener.process.terminate()
        _ = listener.finish()
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/00000001.msg")) == Data("sealed reading".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".msg") }.isEmpty)
    }

    @Test("a full spool refuses the new message (exit 75) and keeps what it held")
    func aFullSpoolRefuses() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let spool = scratch.directory.appendingPathComponent("spool").path
        let small = try scratch.file("small", Array(repeating: 1, count: 600))
        #expect(try MsgPipeProcess.run(["send", "--spool", spool, "--spool-limit", "1000", "--queue-only", small]).status == 0)
        let refused = try MsgPipeProcess.run(["send", "--spool", spool, "--spool-limit", "1000", "--queue-only", small])
        #expect(refused.status == 75)
        #expect(refused.stderr.contains("is full (1 messages, 600 bytes)"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".msg") } == ["0000000001.msg"])
    }

    @Test("the inputs are queued as one batch: a spool too full for all of them queues none (exit 75)")
    func aBatchThatDoesNotFitQueuesNothing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let spool = scratch.directory.appendingPathComponent("spool").path
        let small = try scratch.file("small", Array(repeating: 1, count: 600))
        let refused = try MsgPipeProcess.run(["send", "--spool", spool, "--spool-limit", "1000", "--queue-only", small, small])
        #expect(refused.status == 75)
        #expect(refused.stderr.contains("2 messages of 1200 bytes in all were not queued"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool).filter { $0.hasSuffix(".msg") }.isEmpty)
    }

    @Test("a second send on the same spool is refused (exit 73) with the remedy")
    func aSecondSenderIsRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let spool = scratch.directory.appendingPathComponent("spool").path
        let file = try scratch.file("m", [1, 2, 3])
        // Nobody listens: the first send holds the spool while it tries to connect.
        let first = try RunningMsgPipe(["send", "--spool", spool, "--reconnects", "100"] + scratch.link + [file])
        Thread.sleep(forTimeInterval: 0.5)
        let second = try MsgPipeProcess.run(["send", "--spool", spool, "--queue-only", file])
        #expect(second.status == 73)
        #expect(second.stderr.contains("in use by another msgpipe sender"), "\(second.stderr)")
        first.process.terminate()
        _ = first.finish()
    }

    @Test("a full disk: the message is not queued (exit 73, ENOSPC), no partial file, what was queued stays",
          .enabled(if: ListenDurabilityCLITests.canMount, "needs root to mount a small tmpfs"))
    func fullDisk() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let disk = scratch.directory.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(try ListenDurabilityCLITests.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk]) == 0)
        defer { _ = try? ListenDurabilityCLITests.run("/bin/umount", ["-l", disk]) }
        let spool = disk + "/spool"
        let small = try scratch.file("small", Array(repeating: 7, count: 1000))
        #expect(try MsgPipeProcess.run(["send", "--spool", spool, "--queue-only", small]).status == 0)
        let big = try scratch.file("big", Array(repeating: 9, count: 2 << 20))
        let refused = try MsgPipeProcess.run(["send", "--spool", spool, "--queue-only", big])
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("No space left on device"), "\(refused.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: spool)
        #expect(names.filter { !$0.hasPrefix(".") } == ["0000000001.msg"])
        #expect(!names.contains { $0.hasSuffix(".part") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: spool + "/0000000001.msg")) == Data(repeating: 7, count: 1000))
    }

    @Test("--spool with a plain format, or --queue-only without --spool, is a usage error", arguments: [["--format", "legacy"], ["--queue-only"]])
    func usage(extra: [String]) throws {
        let arguments = extra == ["--queue-only"] ? ["send", "--queue-only"] : ["send", "--spool", "/tmp/x"] + extra
        #expect(try MsgPipeProcess.run(arguments).status == 64)
    }
}
