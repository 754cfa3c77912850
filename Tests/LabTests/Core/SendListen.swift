import Foundation
import Testing

extension Lab.Core {
    /// Check 12: `msgpipe send --to NAME` on hci1 into `msgpipe listen --connections 1` on hci0: a random 1 MiB
    /// arrives byte-identical (listen's standard output), and listen ends by itself after its central left
    /// (its channel accept loop ends with GATT's). 15 s is a hang guard, not a speed test: listen ends about 2 s
    /// after send here, and the hang it catches never ends. send's JSON line also goes to OUT/t12.json, for the
    /// goodput notes of later checks (15, 19b, 34).
    @Test("msgpipe send (hci1, --to NAME) -> msgpipe listen (hci0): 1 MiB arrives byte-identical; listen --connections 1 then exits",
        .tags(.hci0, .hci1))
    func sendListen() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("mib.bin", message)
            let env = lab.environment
            let listen = try lab.startListen(["--adapter", "hci0", "--name", "msgpipe-listen", "--connections", "1"])
            let send = try lab.run("send", env.msgpipe, ["send", "--adapter", "hci1", "--to", "msgpipe-listen", "--json", file.path], seconds: 300)
            let sendEnded = Date()
            listen.wait(seconds: 60)
            let after = Date().timeIntervalSince(sendEnded)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expect(after < 15, "listen ended \(Int(after)) s after send, not within 15 s")
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 1 MiB message")
            let sent = lab.expectSent(send, count: 1, link: nil)
            lab.expect(sent.first?.bytes == Self.mebibyte, "send --json: \(sent.first?.bytes ?? 0) bytes, expected \(Self.mebibyte)")
            try? Data(send.stdout).write(to: env.outDirectory.appendingPathComponent("t12.json"))
            lab.note("listen ended \(String(format: "%.1f", after)) s after send; 1 MiB send: \(LabCheck.rate(Self.mebibyte, sent.first?.seconds))")
        }
    }

    /// Check 12b: the roles the other way round: listen on hci1, send from hci0 by address.
    @Test("reverse roles: msgpipe send (hci0, --to ADDRESS) -> msgpipe listen (hci1): 1 MiB byte-identical", .tags(.hci0, .hci1))
    func transferReverseRoles() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("mib.bin", message)
            let env = lab.environment
            let listen = try lab.startListen(["--adapter", "hci1", "--name", "msgpipe-listen-b", "--connections", "1"])
            let send = try lab.run("send", env.msgpipe, ["send", "--adapter", "hci0", "--to", env.addressB, "--json", file.path], seconds: 300)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 1 MiB message")
            lab.expectSent(send, count: 1, link: nil)
        }
    }
}
