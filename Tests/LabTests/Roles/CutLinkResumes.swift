import Foundation
import Glibc
import Testing

extension Lab.Roles {
    /// Check 27: a central that drops mid-message and comes back resumes without disturbing the other. `listen
    /// --max-centrals 2 --out-dir` on hci0; first hci2 sends 1 MiB alone (its time); then hci1 and hci2 send 1 MiB
    /// each at once. hci1's sender (`msgpipe-lab send --stop-after-bytes 400000`) stops itself mid-message however
    /// fast the build, its own controller cuts the link (HCI Disconnect), and it goes on (SIGCONT): it reconnects
    /// by itself and Transport resumes. All exit 0, the three messages are each in --out-dir once (three files),
    /// and hci1's send says it reconnected. The note has hci2's time beside the cut against alone.
    @Test("a central whose link is cut mid-message (hci1) reconnects and resumes; the other (hci2) is undisturbed; both intact once",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Roles.hasC, "the lab has no third controller"))
    func cutLinkResumes() {
        LabCheck.run { lab in
            let env = lab.environment
            let (solo, b, c) = (LabCheck.randomBytes(Self.mebibyte), LabCheck.randomBytes(Self.mebibyte), LabCheck.randomBytes(Self.mebibyte))
            let inbox = lab.directory.appendingPathComponent("inbox")
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-drop", "--max-centrals", "2",
                "--out-dir", inbox.path, "--verbose"])
            let alone = try lab.run("send-alone", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci2", "--to", "msgpipe-drop", "--json",
                try lab.file("mib_solo.bin", solo).path], seconds: 300)
            lab.expectExit(alone)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            let sendB = try lab.start("send-hci1", env.msgpipeLab, ["send"] + Self.kernel + ["--adapter", "hci1", "--to", "msgpipe-drop",
                "--json", "--verbose", "--stop-after-bytes", "400000", try lab.file("mib_b.bin", b).path])
            let sendC = try lab.start("send-hci2", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci2", "--to", "msgpipe-drop", "--json",
                try lab.file("mib_c.bin", c).path])
            if Lab.NewBluez.waitStopped(sendB, seconds: 120) {
                let handle = LabControllers.leLinks(index: 1).first?.handle
                lab.expect(handle != nil, "hci1 had no LE link to cut while its sender was stopped")
                if let handle {
                    let cut = labShell(["hcitool", "-i", "hci1", "ledc", "\(handle)"])
                    lab.expect(cut.status == 0, "hcitool -i hci1 ledc \(handle): exit \(cut.status) \(cut.output)")
                }
                let deadline = Date(timeIntervalSinceNow: 30)
                while !LabControllers.leLinks(index: 1).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
                kill(sendB.pid, SIGCONT)
            } else {
                lab.fail("hci1's sender did not stop itself mid-message within 120 s")
            }
            sendB.wait(seconds: 600)
            sendC.wait(seconds: 600)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: false)
            listen.stop()
            lab.expectExit(sendB)
            lab.expectExit(sendC)
            lab.expectExit(listen)
            let files = Lab.Core.received(inbox)
            // Messages only: listen keeps its lock and what it delivered in dot files beside them.
            let messages = ((try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []).filter { !$0.hasPrefix(".") }
            lab.expect(messages.count == 3, "listen's --out-dir has \(messages.count) messages, expected 3: \(messages)")
            for (who, message) in [("hci1's (cut)", b), ("hci2's", c), ("hci2's alone", solo)] {
                lab.expect(files.filter { $0 == message }.count == 1, "\(who) 1 MiB is not in listen's --out-dir once")
            }
            // The reconnect has no JSON line: send --verbose's note is its only witness.
            lab.expect(sendB.stderr.contains("reconnected to"), "hci1's send --verbose never reconnected")
            let seconds = { (send: LabProcess) in send.jsonLines(SendLine.self).first?.seconds }
            lab.note("link cut mid-message: hci1 (cut, reconnected) \(Self.text(seconds(sendB))) s; hci2 beside it \(Self.text(seconds(sendC))) s; "
                + "hci2 alone \(Self.text(seconds(alone))) s (ratio \(Self.ratio(seconds(sendC), seconds(alone))))")
        }
    }
}
