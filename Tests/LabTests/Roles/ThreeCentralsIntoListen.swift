import Foundation
import Testing

extension Lab.Roles {
    /// Check 25d: three centrals (hci1-hci3) send 1 MiB each at once into one `listen --max-centrals 3 --count 3
    /// --out-dir` on hci0 (the other direction of check 25c): all exit 0, each message is in --out-dir whole.
    /// listen ends after three messages, not three links: a link that drops under load may come back and resume.
    /// Memory per connection: listen's VmRSS once it advertises, its VmHWM sampled every 0.2 s until it exits;
    /// (peak - before) / 3 must be under 16 MiB (each message's reassembly included). The note has each send's
    /// time, the aggregate goodput, the wall clock and check 12's one alone (OUT/t12.json).
    @Test("three msgpipe sends (hci1, hci2, hci3) of 1 MiB each at once into one listen --max-centrals 3: all intact",
        .tags(.hci0, .hci1, .hci2, .hci3))
    func threeSendsIntoListen() {
        LabCheck.run { lab in
            let env = lab.environment
            guard env.addressC != nil, env.addressD != nil else { return lab.skip("the lab has no fourth controller") }
            let messages = (1...3).map { _ in LabCheck.randomBytes(Self.mebibyte) }
            let files = try (1...3).map { try lab.file("mib_\($0).bin", messages[$0 - 1]) }
            let inbox = lab.directory.appendingPathComponent("inbox")
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-three", "--max-centrals", "3",
                "--count", "3", "--verbose", "--out-dir", inbox.path])
            let before = Self.statusKiB(listen.pid, "VmRSS")
            var peak: Int?
            let started = Date()
            let sends = try (1...3).map { h in
                try lab.start("send-hci\(h)", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci\(h)", "--to", "msgpipe-three", "--json",
                    files[h - 1].path])
            }
            // listen's peak until it exits: at most 600 s for the sends, then 60 s for listen.
            var sendsEnded: Date?
            while listen.isRunning {
                if let hwm = Self.statusKiB(listen.pid, "VmHWM") { peak = max(peak ?? 0, hwm) }
                if sendsEnded == nil && sends.allSatisfy({ !$0.isRunning }) { sendsEnded = Date() }
                if let sendsEnded, Date().timeIntervalSince(sendsEnded) > 60 { break }
                if sendsEnded == nil && Date().timeIntervalSince(started) > 600 { break }
                Thread.sleep(forTimeInterval: 0.2)
            }
            for send in sends { send.wait(seconds: max(1, 600 - Date().timeIntervalSince(started))) }
            let wall = (sendsEnded ?? Date()).timeIntervalSince(started)
            listen.wait(seconds: 60)
            for send in sends { lab.expectExit(send) }
            lab.expectExit(listen)
            let received = Lab.Core.received(inbox).filter { !$0.isEmpty }
            for (h, message) in zip(1..., messages) {
                lab.expect(received.contains(message), "hci\(h)'s 1 MiB is not intact in listen's --out-dir (\(received.count) files)")
            }
            let perConnection = before.flatMap { before in peak.map { ($0 - before) / 3 } }
            lab.expect(perConnection.map { $0 > 0 && $0 < 16_384 } ?? false,
                "listen's memory per connection: RSS \(before.map(String.init) ?? "?") KiB before, peak \(peak.map(String.init) ?? "?") KiB, "
                    + "\(perConnection.map(String.init) ?? "?") KiB per connection, expected under 16 MiB")
            let lines = sends.map { $0.jsonLines(SendLine.self).first }
            lab.note("memory: listen's RSS \(before.map(String.init) ?? "?") KiB before the centrals came, peak \(peak.map(String.init) ?? "?") KiB "
                + "with three sending 1 MiB each (links: \(lines.map { $0?.link ?? "?" }.joined(separator: " "))): "
                + "\(perConnection.map(String.init) ?? "?") KiB per connection, its message included")
            let slowest = lines.allSatisfy { $0 != nil } ? lines.compactMap { $0?.seconds }.max() : nil
            lab.note("three sends of 1 MiB at once into one listen: each \(lines.map { Self.text($0?.seconds) }.joined(separator: " ")) s, "
                + "aggregate \(Self.bps(3 * Self.mebibyte, slowest)) B/s (" + String(format: "%.1f", wall) + " s wall clock); "
                + "one alone (check 12) \(Self.text(Self.savedSeconds("t12.json"))) s")
        }
    }

    /// A `KEY: N kB` field of /proc/PID/status (VmRSS, VmHWM) in KiB; nil once the process is gone.
    static func statusKiB(_ pid: Int32, _ key: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") }
        return line.flatMap { Int($0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") }
    }
}
