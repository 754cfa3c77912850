import Foundation
import Testing

/// `listen` acknowledges a message only once its output took it, and a full disk loses nothing kept and
/// acknowledges nothing it did not keep.
@Suite("listen keeps before it acknowledges")
struct ListenDurabilityCLITests {
    typealias Scratch = ListenSendCLITests.Scratch

    /// A 1 MiB tmpfs, mounted for the test (root only: skipped elsewhere).
    static var canMount: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount") }

    @Test("a full disk: listen exits 73 naming the file, the message is not acknowledged, what was kept stays",
          .enabled(if: canMount, "needs root to mount a small tmpfs"))
    func fullDisk() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let disk = scratch.directory.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk]) == 0)
        defer { _ = try? Self.run("/bin/umount", ["-l", disk]) }
        let inbox = disk + "/inbox"
        let listener = try scratch.listen(["--out-dir", inbox])
        let small = try scratch.file("small", Array(repeating: 7, count: 1000))
        #expect(try scratch.send([small]).status == 0)
        // 2 MiB cannot fit: listen fails writing it and says why; send is never told it arrived. Listen fails
        // only once the whole message arrived, so send's --timeout leaves time for that under load; send ends
        // anyway when listen exits (--reconnects 0).
        let big = try scratch.file("big", (0 ..< (2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let sent = try scratch.send(["--timeout", "60", "--reconnects", "0", big])
        #expect(sent.status != 0, "send: \(sent.stderr)")
        let listened = listener.finish()
        #expect(listened.status == 73)
        #expect(listened.stderr.contains("No space left on device"), "\(listened.stderr)")
        // The first message is kept; no partial file of the second is visible.
        let names = try FileManager.default.contentsOfDirectory(atPath: inbox).sorted()
        #expect(names.filter { !$0.hasPrefix(".") } == ["00000001.msg"])
        #expect(!names.contains { $0.hasSuffix(".part") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/00000001.msg")) == Data(repeating: 7, count: 1000))
    }

    @Test("a second listen on the same --out-dir is refused with the remedy")
    func secondListenOnTheSameDirectory() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let inbox = scratch.directory.appendingPathComponent("inbox").path
        let first = try scratch.listen(["--out-dir", inbox])
        let second = try MsgPipeProcess.run(["listen", "--link", "unix:" + scratch.socket + "2", "--out-dir", inbox])
        #expect(second.status == 73)
        #expect(second.stderr.contains("in use by another msgpipe receiver"), "\(second.stderr)")
        first.process.terminate()
        _ = first.finish()
    }

    @Test("listen killed after keeping a message, before acknowledging it: the restarted listen does not write it again",
          arguments: [false, true])
    func killedAfterKeepingIsNotWrittenTwice(json: Bool) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let inbox = scratch.directory.appendingPathComponent("inbox").path
        let output = json ? ["--state", inbox, "--json"] : ["--out-dir", inbox]
        let body = (0 ..< 300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let file = try scratch.file("m", body)
        // msgpipe-lab listen SIGKILLs itself once the message is kept (file and journal synced), before the
        // acknowledgement: the sender's session resends it to the next listen.
        let doomed = try scratch.listen(["--kill-after-kept", "1"] + output)
        let sending = try RunningMsgPipe(["send", "--link", "unix:" + scratch.socket, "--reconnects", "100", file])
        let killed = doomed.finish()
        #expect(killed.status == 9, "\(killed.stderr)")
        let again = try scratch.listen(output + ["--verbose"])
        let sent = sending.finish()
        #expect(sent.status == 0, "send: \(sent.stderr)")
        again.process.terminate()
        let second = again.finish()
        if json {
            #expect(try ListenSendCLITests.messages(killed.stdout).map(\.body) == [body])
            #expect(second.stdout.isEmpty, "written again: \(second.stdout.count) bytes")
        } else {
            let names = try FileManager.default.contentsOfDirectory(atPath: inbox).filter { !$0.hasPrefix(".") }
            #expect(names == ["00000001.msg"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/00000001.msg")) == Data(body))
        }
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
