import Foundation
import Glibc
import Testing

extension Lab.NewBluez {
    /// Two centrals send 1 MiB each at once into one listen: bluetoothd 5.76 and later give each central its own
    /// acquired sockets and notify each only through its own, so listen serves both at once (5.66 served them one
    /// after the other). hci1's sender stops itself mid-message, hci2's starts then, and hci1's goes on once listen
    /// took hci2's connection: the two overlap however fast the build.
    @Test("newer bluetoothd: two centrals (hci1, hci2) send 1 MiB each at once into one listen: both exit 0, served at once")
    func twoCentralsAtOnce() {
        let first = LabCheck.randomBytes(Self.mebibyte), second = LabCheck.randomBytes(Self.mebibyte)
        Self.run({ lab, listen in
            let env = lab.environment
            let started = Date()
            let b = try Self.send(lab, "send-hci1", adapter: "hci1", try lab.file("mib.bin", first), stopAfterBytes: 400_000)
            lab.expect(Self.waitStopped(b, seconds: 120), "hci1's sender never stopped itself mid-message")
            let c = try Self.send(lab, "send-hci2", adapter: "hci2", try lab.file("mib2.bin", second))
            lab.expect(listen.waitForStderr(containing: "msgpipe: connection from \(env.addressC ?? "C")"), "listen never took hci2's connection")
            kill(b.pid, SIGCONT)
            b.wait(seconds: 300)
            c.wait(seconds: 300)
            lab.expectExit(b)
            lab.expectExit(c)
            // listen's connection notes are the only witness of when each central was served (no JSON for them).
            lab.expect(Self.servedAtOnce(listen.stderr, env.addressB, env.addressC ?? ""), "listen never had both centrals connected at the same time")
            let seconds = { (send: LabProcess) in send.jsonLines(SendLine.self).first.map { "\($0.seconds)" } ?? "?" }
            lab.note("newer bluetoothd: two centrals, 1 MiB each, at once: both done after \(Int(Date().timeIntervalSince(started))) s (connects included); transfers \(seconds(b)) s and \(seconds(c)) s")
        }, verdict: { lab, lines in
            lab.expectEachOnce([("hci1's 1 MiB", first), ("hci2's 1 MiB", second)], in: lines)
        })
    }

    /// Whether `process` is stopped (SIGSTOP: state T in /proc/PID/stat), waiting at most `seconds`; false once it exited.
    static func waitStopped(_ process: LabProcess, seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while process.isRunning && Date() < deadline {
            let stat = (try? String(contentsOfFile: "/proc/\(process.pid)/stat", encoding: .utf8)) ?? ""
            // "PID (COMM) STATE ...": the state follows the command's closing parenthesis.
            if let close = stat.lastIndex(of: ")"), stat[close...].dropFirst().trimmingCharacters(in: .whitespaces).first == "T" { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Whether listen's "msgpipe: connection from PEER" / "... PEER ended" lines show a connection of `b` and one
    /// of `c` open at the same time. Through bluetoothd a central has two: "ADDRESS" (GATT, which ends before a
    /// hello when the data goes over the channel) and "ADDRESS (public)" (the L2CAP channel); each is its own.
    static func servedAtOnce(_ log: String, _ b: String, _ c: String) -> Bool {
        var open: Set<Substring> = []
        for line in log.split(separator: "\n") where line.hasPrefix("msgpipe: connection from ") {
            let peer = line.dropFirst("msgpipe: connection from ".count)
            if peer.hasSuffix(" ended") { open.remove(peer.dropLast(" ended".count)) } else { open.insert(peer) }
            if open.contains(where: { $0.hasPrefix(b) }) && open.contains(where: { $0.hasPrefix(c) }) { return true }
        }
        return false
    }
}
