import Foundation
import Testing

extension Lab.Bumble {
    /// bumble 6: two phone centrals (hci2 and hci3, each its own random static address) connect by address at
    /// one wall-clock second (`--at`) into one `listen --max-centrals 2`: both Create Connections are in flight at
    /// once (btvirt keeps the second pending until hci0 advertises again). Both files arrive byte-identical;
    /// btmon's connect lines go to btmon_connects.txt in the test's log directory.
    @Test("bumble: two Bumble centrals (hci2, hci3) started at the same instant into one listen --max-centrals 2 are both served",
        .tags(.hci2, .hci3))
    func twoCentralsAtOnce() {
        BumbleLab.run(controllers: [2, 3], needsFour: true) { bumble in
            let lab = bumble.lab
            let files = [2: LabCheck.randomBytes(32_768), 3: LabCheck.randomBytes(65_536)]
            let listen = try bumble.advertising("listen", [
                "listen", "--adapter", "hci0", "--name", "msgpipe-bb2", "--profile", BumbleLab.profile(BumbleLab.legacy), "--format", "legacy",
                "--max-centrals", "2", "--connections", "2", "--json", "--verbose"])
            let started = Date()
            let at = Int(Date().timeIntervalSince1970) + 10  // both connect at this second, whatever their start-up took
            let phones = try [2, 3].map { index in
                try bumble.startPeer("bumble-hci\(index)", "bumble_central.py", index: index, [
                    "--to", lab.environment.addressA, "--at", "\(at)", "--mtu", "185", "--service", "FFF0", "--write", "FFF2", "--notify", "FFF1",
                    "--format", "legacy", "--send", try lab.file("hci\(index).bin", files[index]!).path])
            }
            for phone in phones { phone.wait(seconds: 120) }
            let both = Date().timeIntervalSince(started)
            listen.wait(seconds: 60)
            for phone in phones { lab.expectExit(phone) }
            lab.expectExit(listen)
            let bodies = listen.jsonLines(ListenLine.self).map { $0.body ?? [] }
            lab.expect(bodies.contains(files[2]!), "hci2's file did not arrive intact (\(bodies.map(\.count)) bytes arrived)")
            lab.expect(bodies.contains(files[3]!), "hci3's file did not arrive intact (\(bodies.map(\.count)) bytes arrived)")
            let connects = lab.btmonSinceStart().split(separator: "\n").filter {
                $0.contains("LE Create Connection") || $0.contains("LE Connection Complete") || $0.contains("LE Enhanced Connection Complete")
                    || $0.contains("Add Advertising") || $0.contains("LE Set Advertising Enable") || $0.contains("LE Set Extended Advertising Enable")
            }
            try? connects.joined(separator: "\n").write(to: lab.directory.appendingPathComponent("btmon_connects.txt"), atomically: true, encoding: .utf8)
            for (index, phone) in zip([2, 3], phones) {
                let report = bumble.report(phone)
                lab.note("bumble: two at once: hci\(index): connected to \(report?.connectedTo ?? "?"); \(report?.numbers ?? "no numbers")")
            }
            lab.note("bumble: two at once: both done after \(String(format: "%.1f", both)) s")
        }
    }
}
