import Foundation
import Testing

extension Lab.StockBox {
    /// Check 31: encrypted request/serve through bluetoothd: `serve` on hci0 runs its command for `request` on
    /// hci1 (the answer comes back, exit 0); the same `--id` again gets the journal's answer, and the command ran
    /// once in all.
    @Test("stock box: request -> serve through bluetoothd; the same id again is answered from the journal", .tags(.hci0, .hci1))
    func requestServeJournal() {
        Self.run { lab, _ in
            let env = lab.environment
            let key = lab.directory.appendingPathComponent("sb_secure.key").path
            lab.expectExit(try lab.run("keygen", env.msgpipe, ["keygen", "--out", key], seconds: 30))
            let ran = lab.directory.appendingPathComponent("ran").path
            let serve = try lab.start("serve", env.msgpipe, ["serve"] + Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-srv",
                "--key-file", key, "--state", lab.directory.appendingPathComponent("state").path,
                "--exec", "echo ran >> '\(ran)'; printf \"approved:\"; cat"])
            lab.expect(serve.waitForStderr(containing: "advertising"), "serve never advertised")
            let payment = try lab.file("pay.txt", Array("pay 3.00 EUR".utf8))
            for attempt in 1...2 {
                let request = try lab.run("request-\(attempt)", env.msgpipe, ["request"] + Self.bluez + ["--adapter", "hci1", "--to", "msgpipe-srv",
                    "--key-file", key, "--id", "sb-1", "--timeout", "120"], input: payment, seconds: 150)
                lab.expectExit(request)
                lab.expect(request.stdoutText.trimmingCharacters(in: .newlines) == "approved:pay 3.00 EUR",
                    "request \(attempt)'s output: \"\(request.stdoutText)\", expected \"approved:pay 3.00 EUR\"")
                _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            }
            serve.stop()
            let runs = ((try? String(contentsOfFile: ran, encoding: .utf8)) ?? "").split(separator: "\n").count
            lab.expect(runs == 1, "the command ran \(runs) times, expected once")
        }
    }

    /// Check 32: `listen --security medium` through bluetoothd on hci0, the lab's mgmt pairing agent stopped: the
    /// confirmation must come from msgpipe's own NoInputNoOutput agent, while hci1's bluetoothd raises the link's
    /// security when the CCC write is refused, with no agent of its own. Device1.Paired on hci1 is true after the
    /// first send, and a second send over the bond delivers too: both messages arrive whole.
    @Test("stock box: --security medium pairs hci1 with msgpipe's agent on hci0 (Just Works), then a bonded reconnect delivers",
        .tags(.hci0, .hci1))
    func securityMediumBonded() {
        Self.run { lab, _ in
            let env = lab.environment
            let agent = BondingLab.stopPairingAgent()
            defer { if let agent { BondingLab.startPairingAgent(agent, log: lab.directory.appendingPathComponent("mgmt_autoconfirm.log")) } }
            let device = "/org/bluez/hci1/dev_" + env.addressA.replacingOccurrences(of: ":", with: "_")
            let messages = [LabCheck.randomBytes(4096), LabCheck.randomBytes(4096)]
            let listen = try lab.startListen(Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-sec", "--security", "medium", "--verbose", "--json"])
            for (n, message) in zip(1..., messages) {
                let send = try lab.run("send-\(n)", env.msgpipe, ["send"] + Self.bluez + ["--adapter", "hci1", "--to", "msgpipe-sec",
                    try lab.file("sec\(n).bin", message).path], seconds: 120)
                lab.expectExit(send)
                let paired = labShell(["busctl", "--system", "get-property", "org.bluez", device, "org.bluez.Device1", "Paired"]).output
                lab.expect(paired.trimmingCharacters(in: .whitespacesAndNewlines) == "b true", "hci1's Device1.Paired after send \(n): \(paired)")
                Lab.Roles.waitUntil(seconds: 30) { listen.jsonLines(ListenLine.self).count >= n }
                _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            }
            listen.stop()
            lab.expectExit(listen)
            lab.expectEachOnce([("message 1", messages[0]), ("message 2", messages[1])], in: listen.jsonLines(ListenLine.self))
            // Both bluetoothds keep the bond on disk: forget it, as the next test's box has never met this peer.
            Self.removeDevice(adapter: 1, env.addressA)
            Self.removeDevice(adapter: 0, env.addressB)
        }
    }

    /// Check 32b: a phone that bonds, through bluetoothd: the Bonding section's Bumble phone (its own key store, a
    /// fixed random static address) on hci3 (hci1 without a fourth controller), taken from bluetoothd before each
    /// phone. It writes before pairing and gets the ATT error of bluetoothd's GATT server (0x05 or 0x0F), pairs
    /// with bonding (bluetoothd's SMP, msgpipe's agent answering Just Works) and writes; after listen restarts it
    /// encrypts with its stored key without pairing again and writes. Both messages arrive.
    @Test("stock box: a Bumble phone writing before pairing gets an ATT error from bluetoothd, bonds (msgpipe's agent), writes; after listen restarts it encrypts with its stored key and writes",
        .tags(.hci0, .hci3, .bumble))
    func bumblePhoneBonds() {
        let why = LabBumble.python == nil ? "no Bumble in \(ProcessInfo.processInfo.environment["BLELAB_DIR"] ?? "/tmp/blelab")/bumble/bin/python" : nil
        Self.run(unless: why) { lab, _ in
            let phone = "C0:5B:0D:00:00:05"
            try BondingLab.within(lab, phone: phone) { bond in
                for n in 1...2 {
                    let listen = try lab.startListen(Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-bond", "--security", "medium",
                        "--profile", "nus", "--format", "lines", "--count", "1", "--json", "--verbose"], label: "listen-\(n)")
                    // bluetoothd powers the phone's controller again once Bumble let it go.
                    LabBumble.takePhoneController()
                    let (process, report) = try bond.phone("phone-\(n)", n == 1 ? ["--write-first"] : [])
                    bond.expectDelivered(listen)
                    if n == 1 {
                        bond.expectPhone(process, report, how: "paired")
                        lab.expect([0x05, 0x0F].contains(report?.writeBeforePairing ?? 0),
                            "the write before pairing got \(report?.writeBeforePairing.map { "ATT error \($0)" } ?? "no answer"), expected ATT error 0x05 or 0x0F")
                        bond.noteTime("through bluetoothd, first pairing", report)
                    } else {
                        bond.expectPhone(process, report, how: "stored key")
                        bond.noteTime("through bluetoothd, after listen restarted", report)
                    }
                    _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
                }
                Self.removeDevice(adapter: 0, phone)
            }
        }
    }

    /// Makes bluetoothd on hci`adapter` forget the device at `address` (Adapter1.RemoveDevice: its bond too).
    static func removeDevice(adapter: Int, _ address: String) {
        labShell(["busctl", "--system", "call", "org.bluez", "/org/bluez/hci\(adapter)", "org.bluez.Adapter1", "RemoveDevice", "o",
            "/org/bluez/hci\(adapter)/dev_" + address.replacingOccurrences(of: ":", with: "_")])
    }
}
