import Foundation
import Glibc
import Testing

extension Lab.Core {
    /// Check 13: `msgpipe-lab send --kill-after-bytes 400000` SIGKILLs itself mid-transfer, then a new send
    /// delivers the file: the still running listen writes the message exactly once (the dead session's partial
    /// message is never written). The second send may ride the link the killed one left (it lingers about 2 s),
    /// so listen is stopped with SIGTERM 2 s after it.
    @Test("send killed mid-transfer and run again: listen holds the 1 MiB message exactly once", .tags(.hci0, .hci1))
    func killedSenderOnce() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("mib.bin", message)
            let env = lab.environment
            let listen = try lab.startListen(["--adapter", "hci0", "--name", "msgpipe-once"])
            let killed = try lab.run("killed-send", env.msgpipeLab, [
                "send", "--adapter", "hci1", "--to", "msgpipe-once", "--kill-after-bytes", "400000", file.path], seconds: 300)
            let again = try lab.run("send-again", env.msgpipe, ["send", "--adapter", "hci1", "--to", "msgpipe-once", file.path], seconds: 300)
            Thread.sleep(forTimeInterval: 2)
            listen.stop(seconds: 30)
            lab.expectExit(killed, .signal(SIGKILL))
            lab.expectExit(again)
            lab.expectExit(listen)
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 1 MiB message exactly once")
        }
    }
}
