import Foundation
import Testing

extension Lab.Core {
    /// Check 18: while `msgpipe send` on hci1 moves 2 MiB into `msgpipe listen --count 1` on hci0 (one central at
    /// a time), gatttool on hci2 tries to connect. Listen does not advertise while it serves its one central, so
    /// the second central cannot land on a listener that will not answer it: the file arrives byte-identical and
    /// gatttool is answered or never connects ("Discover all primary services failed" after 30 s was the bug).
    /// `--count 1`, not `--connections 1`: a send whose link drops under load comes back and resumes (the note
    /// says so). gatttool gets 60 s, and at most 2 s once listen is gone (then nothing can leave it unanswered).
    @Test("a second central during a 2 MiB send -> listen neither breaks the transfer nor waits unanswered",
        .tags(.hci0, .hci1, .hci2), .enabled(if: LabEnvironment.current?.addressC != nil, "the lab has no third controller"))
    func secondCentralDuringTransfer() {
        LabCheck.run { lab in
            let env = lab.environment
            let message = LabCheck.randomBytes(2 * Self.mebibyte)
            let file = try lab.file("2mib.bin", message)
            let listen = try lab.startListen(["--adapter", "hci0", "--name", "msgpipe-busy", "--count", "1"])
            let send = try lab.start("send", env.msgpipe, ["send", "--adapter", "hci1", "--to", "msgpipe-busy", "--json", file.path])
            // The transfer is under way once hci0 has its link (at most 60 s).
            for _ in 0..<300 {
                if !LabControllers.leLinks(index: 0).isEmpty { break }
                Thread.sleep(forTimeInterval: 0.2)
            }
            Thread.sleep(forTimeInterval: 3)
            let started = Date()
            let gatttool = try lab.start("gatttool", "/usr/bin/gatttool", ["-i", "hci2", "-b", env.addressA, "-t", "public", "--primary"])
            send.wait(seconds: 600)
            listen.wait(seconds: 60)
            gatttool.wait(seconds: max(0.1, min(2, 60 - Date().timeIntervalSince(started))))
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 2 MiB message")
            let answer = gatttool.stdoutText + gatttool.stderr
            lab.expect(!answer.contains("Discover all primary services failed"), "gatttool on hci2 was left unanswered")
            lab.note("second central: gatttool \(gatttool.exit.map(String.init(describing:)) ?? "?") after "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
            if send.stderr.contains("reconnecting") { lab.note("second central: send's link dropped and it resumed") }
        }
    }
}
