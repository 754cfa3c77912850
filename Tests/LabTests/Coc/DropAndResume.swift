import Foundation
import Testing

extension Lab.Coc {
    /// msgpipe-lab listen --drop-after-bytes closes the channel mid-transfer: send reconnects, opens a new
    /// channel, and Transport resumes the message, which arrives once, byte-identical.
    @Test("a channel dropped mid-transfer: send reconnects over a new channel, Transport resumes, 1 MiB arrives once",
        .tags(.kernel, .hci0, .hci1))
    func dropAndResume() {
        LabCheck.run { lab in
            try lab.dropAndResume(name: "msgpipe-cocd", Self.kernel, link: "l2cap")
        }
    }
}

extension LabCheck {
    /// `msgpipe-lab listen --drop-after-bytes 600000` on hci0 (NAME) drops the connection mid-transfer of 1 MiB
    /// from `msgpipe send --to NAME` on hci1 (`options` added to both): send reconnects (scan by name, backoff)
    /// and Transport resumes; listen's output is the message exactly once, send's one JSON line names `link`
    /// (when given). A channel's central comes back over the link still up (one connection for --connections),
    /// so listen is stopped with SIGTERM 2 s after send ends.
    func dropAndResume(name: String, _ options: [String], link: String?) throws {
        let message = LabCheck.randomBytes(Lab.Coc.mebibyte)
        let file = try self.file("message.bin", message)
        let listen = try startListen(options + ["--adapter", "hci0", "--name", name, "--drop-after-bytes", "600000", "--verbose"],
            executable: environment.msgpipeLab)
        let send = try run("send", environment.msgpipe, ["send"] + options + [
            "--adapter", "hci1", "--to", name, "--verbose", "--json", file.path], seconds: 300)
        Thread.sleep(forTimeInterval: 2)
        listen.stop(seconds: 30)
        expectExit(send)
        expectExit(listen)
        // Standard output is the messages' bytes back to back: exactly the message means it arrived once.
        expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 1 MiB message once")
        expectSent(send, count: 1, link: link)
        // The lab tool's fault fired, and send came back (neither has a JSON line for it).
        expect(listen.stderr.contains("dropping the connection"), "msgpipe-lab never dropped the connection")
        expect(send.stderr.contains("reconnected to"), "send --verbose never reconnected")
    }
}
