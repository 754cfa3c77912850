import Foundation
import Testing

extension Lab.Coc {
    /// msgpipe-lab listen --drop-after-bytes closes the channel mid-transfer: send reconnects, opens a new
    /// channel, and Transport resumes the message, which arrives once, byte-identical. The new channel rides the
    /// link still up (one connection for --connections), so listen is stopped with SIGTERM 2 s after send ends.
    @Test("a channel dropped mid-transfer: send reconnects over a new channel, Transport resumes, 1 MiB arrives once",
        .tags(.kernel, .hci0, .hci1))
    func dropAndResume() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("message.bin", message)
            let env = lab.environment
            let listen = try lab.start("listen", env.msgpipeLab, ["listen"] + Self.kernel + [
                "--adapter", "hci0", "--name", "msgpipe-cocd", "--drop-after-bytes", "600000", "--verbose"])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-cocd", "--verbose", "--json", file.path], seconds: 300)
            Thread.sleep(forTimeInterval: 2)
            listen.stop(seconds: 30)
            lab.expectExit(send)
            lab.expectExit(listen)
            // Standard output is the messages' bytes back to back: exactly the message means it arrived once.
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 1 MiB message once")
            lab.expectSent(send, count: 1, link: "l2cap")
            // The lab tool's fault fired, and send came back (neither has a JSON line for it).
            lab.expect(listen.stderr.contains("dropping the connection"), "msgpipe-lab never dropped the channel")
            lab.expect(send.stderr.contains("reconnected to"), "send --verbose never reconnected")
        }
    }
}
