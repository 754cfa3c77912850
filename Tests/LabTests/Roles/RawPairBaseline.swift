import Foundation
import Glibc
import Testing

extension Lab.Roles {
    /// Check 25g: is a pair of centrals slower because of msgpipe or because of the lab? The raw C baseline
    /// (`att_blast`: Write Commands straight on the kernel's ATT channel, no msgpipe) sends 2 MiB from hci1 alone
    /// into `att_blast sink` on hci0, then from hci1 and hci2 at once into `att_blast sink A 2`, both released
    /// through a FIFO once connected. Judges every exit 0 and the sinks' own totals (2 MiB, then 4 MiB). The note
    /// has the pair's time against one alone: about twice means the lab's one emulated controller is the limit.
    @Test("raw C baseline: 2 MiB from one central, then from two at once (hci1, hci2) into one sink on hci0: all arrives",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Roles.hasC, "the lab has no third controller"))
    func rawPairBaseline() {
        LabCheck.run { lab in
            let env = lab.environment
            guard let addressC = env.addressC else { return }
            let blast = lab.peer("att_blast")
            let bytes = 2 * Self.mebibyte
            // att_blast's sink is a C peripheral: hci0 advertises for it through one connectable instance.
            let advertise = { _ = labShell(["btmgmt", "--index", "0", "add-adv", "-c", "-g", "1"]) }
            defer { labShell(["btmgmt", "--index", "0", "rm-adv", "1"]) }

            advertise()
            let sinkOne = try lab.start("sink-one", blast, ["sink", env.addressA])
            lab.expect(sinkOne.waitForStdout(containing: "listening"), "att_blast sink never listened")
            let one = try lab.run("send-one", blast, ["send", env.addressB, env.addressA, "\(bytes)"], seconds: 120)
            sinkOne.wait(seconds: 30)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)

            // Not in OUT: the VM's 9p share has no FIFOs.
            let gate = "/tmp/t25g-\(UInt32.random(in: 0...UInt32.max))"
            lab.expect(mkfifo(gate, 0o600) == 0, "mkfifo \(gate) failed")
            defer { unlink(gate) }
            let sinkTwo = try lab.start("sink-two", blast, ["sink", env.addressA, "2"])
            lab.expect(sinkTwo.waitForStdout(containing: "listening"), "att_blast sink 2 never listened")
            var pair: [LabProcess] = []
            for (label, address) in [("send-b", env.addressB), ("send-c", addressC)] {
                advertise()
                let send = try lab.start(label, blast, ["send", address, env.addressA, "\(bytes)", gate])
                lab.expect(Self.waitUntil(seconds: 60) { send.stdoutText.contains("connected") || send.stderr.contains("rror") || !send.isRunning },
                    "\(label) never connected")
                pair.append(send)
            }
            let go = labShell(["sh", "-c", "echo go > '\(gate)'"], seconds: 10)
            // Both senders leave the gate on the write or on its end of file, as in the bash check: the shell's
            // status is not a verdict (it has failed with EIO once both had read); the senders' exits and the
            // sink's bytes are.
            if go.status != 0 { lab.note("writing the gate: exit \(go.status) \(go.output.trimmingCharacters(in: .whitespacesAndNewlines))") }
            for send in pair { send.wait(seconds: 120) }
            sinkTwo.wait(seconds: 30)

            for process in [one] + pair { lab.expectExit(process) }
            lab.expect(sinkOne.stdoutText.contains("sink got \(bytes) bytes"), "att_blast sink did not get all \(bytes) bytes from one central")
            lab.expect(sinkTwo.stdoutText.contains("sink got \(2 * bytes) bytes"), "att_blast sink did not get all \(2 * bytes) bytes from two")
            let (alone, b, c) = (Self.rawSeconds(one), Self.rawSeconds(pair[0]), Self.rawSeconds(pair[1]))
            let slower = b.flatMap { b in c.map { max(b, $0) } }
            lab.note("raw C baseline (no msgpipe), 2 MiB: one alone \(Self.text(alone)) s; two at once \(Self.text(b)) s and "
                + "\(Self.text(c)) s, \(Self.ratio(slower, alone)) times one alone")
        }
    }

    /// The X of att_blast send's "sent N bytes in X s" line.
    static func rawSeconds(_ send: LabProcess) -> Double? {
        let text = send.stdoutText
        guard let range = text.range(of: " bytes in ") else { return nil }
        return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
}
