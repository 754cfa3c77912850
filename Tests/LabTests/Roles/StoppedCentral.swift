import Foundation
import Glibc
import Testing

extension Lab.Roles {
    /// Check 28: a central that stops reading slows only itself. `send --name --centrals 2 --verbose` (256 KiB)
    /// on hci0; `listen --to NAME` on hci2 subscribes first and is stopped (SIGSTOP to listen itself) once send
    /// says so: send sends nothing before both subscribed, so hci2 reads nothing at all however fast the machine.
    /// hci1 then subscribes and must have its whole message while hci2 stays stopped (a sender that waited for
    /// its slowest central never would); hci2 continues then. Judged: hci2 was the one subscribed central when
    /// stopped, hci1's output was the message before the SIGCONT, all exit 0, both outputs intact. The stop lasts
    /// at most 20 s after hci1 subscribed: several times hci1's 256 KiB on a loaded lab, and below the ~26 s of
    /// retransmission timeouts after which send gives a silent central up.
    @Test("a central that stops reading (hci2) slows only itself: hci1 finishes while hci2 is stopped, both intact",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Roles.hasC, "the lab has no third controller"))
    func stoppedCentral() {
        LabCheck.run { lab in
            let env = lab.environment
            guard let addressC = env.addressC else { return }
            let message = LabCheck.randomBytes(262_144)
            let file = try lab.file("kib256.bin", message)
            let send = try lab.start("send", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-slow", "--centrals", "2",
                "--json", "--verbose", file.path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
            // send --verbose's "msgpipe: central ADDRESS (public) subscribed" lines, in order.
            let subscribed = {
                send.stderr.split(separator: "\n").filter { $0.hasPrefix("msgpipe: central ") && $0.hasSuffix(" subscribed") }
                    .map { $0.dropFirst("msgpipe: central ".count).dropLast(" subscribed".count) }
            }
            let listenC = try lab.start("listen-hci2", env.msgpipe, ["listen"] + Self.kernel + ["--adapter", "hci2", "--to", "msgpipe-slow",
                "--count", "1"])
            Self.waitUntil(seconds: 60) { !subscribed().isEmpty }
            let atStop = subscribed()
            kill(listenC.pid, SIGSTOP)
            lab.expect(atStop.count == 1 && Self.names(atStop.first.map { String($0) }, addressC),
                "when hci2's listen was stopped, send had \(atStop.count) of 2 centrals subscribed (\(atStop)), expected hci2 (\(addressC)) alone")
            let listenB = try lab.start("listen-hci1", env.msgpipe, ["listen"] + Self.kernel + ["--adapter", "hci1", "--to", "msgpipe-slow",
                "--count", "1"])
            Self.waitUntil(seconds: 60) { subscribed().count >= 2 }
            // hci1 has its message once listen wrote all of it (listen then waits up to 2 s for the peripheral to hang up).
            let whole = Self.waitUntil(seconds: 20) { listenB.stdout == message }
            lab.expect(whole, "hci1's listen did not have its whole message within 20 s while hci2 was stopped "
                + "(\(listenB.stdout.count) bytes; send: \(subscribed().count) subscribed)")
            kill(listenC.pid, SIGCONT)
            listenB.wait(seconds: 300)
            listenC.wait(seconds: 300)
            send.wait(seconds: 120)
            for process in [listenB, listenC, send] { lab.expectExit(process) }
            lab.expect(listenB.stdout == message, "hci1's listen wrote \(listenB.stdout.count) bytes, not the 256 KiB message")
            lab.expect(listenC.stdout == message, "hci2's listen wrote \(listenC.stdout.count) bytes, not the 256 KiB message")
            let lines = send.jsonLines(SendLine.self)
            let b = lines.first { Self.names($0.peer, env.addressB) }?.seconds, c = lines.first { Self.names($0.peer, addressC) }?.seconds
            lab.note("a central stopped until the other finished, 256 KiB: hci1 \(Self.text(b)) s, hci2 (stopped) \(Self.text(c)) s "
                + "(1 MiB in check 25: \(Self.text(Self.savedSeconds("t25.json", peer: env.addressB))) s and "
                + "\(Self.text(Self.savedSeconds("t25.json", peer: addressC))) s)")
        }
    }
}
