import Foundation
import Testing

extension Lab.StockBox {
    /// Check 23d, day two on a stock box as a normal user: `nobody` (setpriv: uid and gid 65534, no groups,
    /// Debian's D-Bus policy) runs one `listen --backend bluez --out-dir` on hci0 and six sends in a row from hci1
    /// without waiting for links to go, alternately `--to NAME` with 100 KiB and `--to ADDRESS` with 1 KiB
    /// (`--connect-timeout 15 --reconnects 2`). Each send exits 0 and the inbox holds each file exactly three
    /// times: a central ends the link it made, and a peripheral serving one central at a time advertises again
    /// when that central's session ends. Notes: each send's time.
    @Test("stock box, day two as a normal user: six sends in a row into one listen, by name and by address, each arrives once",
        .tags(.hci0, .hci1))
    func dayTwoAsNormalUser() {
        let big = LabCheck.randomBytes(100 * 1024)
        let small = LabCheck.randomBytes(1024)
        Self.run { lab, _ in
            let env = lab.environment
            let home = URL(fileURLWithPath: "/tmp/day2")
            let inbox = home.appendingPathComponent("inbox")
            try? FileManager.default.removeItem(at: home)
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            let bigFile = home.appendingPathComponent("big.bin")
            let smallFile = home.appendingPathComponent("small.bin")
            try Data(big).write(to: bigFile)
            try Data(small).write(to: smallFile)
            lab.expect(labShell(["chown", "-R", "65534:65534", home.path]).status == 0, "cannot give /tmp/day2 to nobody")
            labShell(["chmod", "644", bigFile.path, smallFile.path])
            let asUser = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", env.msgpipe]
            let listen = try lab.start("listen", "/usr/bin/setpriv", asUser + [
                "listen", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-day2", "--verbose", "--out-dir", inbox.path])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen (as nobody) never advertised")
            let began = Date()
            var logs = listen.stderr
            for number in 1...6 {
                let (to, file) = number % 2 == 1 ? ("msgpipe-day2", bigFile) : (env.addressA, smallFile)
                let started = Date()
                let send = try lab.start("send\(number)", "/usr/bin/setpriv", asUser + [
                    "send", "--backend", "bluez", "--adapter", "hci1", "--to", to, "--connect-timeout", "15", "--reconnects", "2",
                    "--json", "--verbose", file.path])
                send.wait(seconds: 120)
                lab.note("day two: send \(number) (--to \(to)) \(send.exit.map { "\($0)" } ?? "?") after \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
                lab.expectExit(send)
                lab.expectSent(send, count: 1, link: nil)
                logs += send.stderr
            }
            lab.note("day two: six sends done after \(String(format: "%.2f", Date().timeIntervalSince(began))) s")
            Thread.sleep(forTimeInterval: 1)
            listen.stop()
            lab.expectExit(listen)
            logs += listen.stderr
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []).filter { $0.hasSuffix(".msg") }
            let messages = names.compactMap { try? [UInt8](Data(contentsOf: inbox.appendingPathComponent($0))) }
            lab.expect(names.count == 6, "\(names.count) messages in the inbox, expected 6")
            lab.expect(messages.filter { $0 == big }.count == 3, "the 100 KiB arrived \(messages.filter { $0 == big }.count) times, expected 3")
            lab.expect(messages.filter { $0 == small }.count == 3, "the 1 KiB arrived \(messages.filter { $0 == small }.count) times, expected 3")
            lab.expect(logs.contains("data over l2cap channel"), "no message went over the L2CAP channel (no \"data over l2cap channel\" in the logs)")
        }
    }
}
