import Foundation
import Testing

extension Lab.Roles {
    /// Check 25's first half: `send --name` on hci0 pushes 1 MiB to `listen --to NAME` on hci1 alone: both exit 0,
    /// listen's output is the message, send's one JSON line names hci1. Its time (OUT/t25a.json) is what the pushes
    /// to two and three centrals compare against.
    @Test("send --name (hci0) -> listen --to NAME (hci1): the peripheral pushes 1 MiB to one central, byte-identical",
        .tags(.hci0, .hci1))
    func pushToOneCentral() {
        LabCheck.run { lab in
            let env = lab.environment
            let push = try Self.push(lab, name: "msgpipe-push1", to: [("hci1", env.addressB)], saveAs: "t25a.json")
            let seconds = push.lines.first?.seconds
            lab.note("peripheral pushes 1 MiB to one central: \(Self.text(seconds)) s (\(Self.bps(Self.mebibyte, seconds)) B/s)")
        }
    }

    /// Check 25: `send --name --centrals 2` on hci0 pushes 1 MiB to `listen --to NAME` on hci1 and hci2, served at
    /// once: all exit 0, both outputs are the message, send's two JSON lines name hci1 and hci2. The note has each
    /// central's time, the aggregate goodput and its ratio to one central alone (OUT/t25a.json, `pushToOneCentral`).
    @Test("send --name --centrals 2 (hci0) pushes 1 MiB to two subscribed centrals (hci1, hci2): both byte-identical",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Roles.hasC, "the lab has no third controller"))
    func pushToTwoCentrals() {
        LabCheck.run { lab in
            let env = lab.environment
            guard let addressC = env.addressC else { return }
            let push = try Self.push(lab, name: "msgpipe-push", to: [("hci1", env.addressB), ("hci2", addressC)], saveAs: "t25.json")
            let one = Self.savedSeconds("t25a.json")
            let b = push.lines.first { Self.names($0.peer, env.addressB) }?.seconds, c = push.lines.first { Self.names($0.peer, addressC) }?.seconds
            let slower = b.flatMap { b in c.map { max(b, $0) } }
            lab.note("peripheral pushes 1 MiB: one central \(Self.text(one)) s (\(Self.bps(Self.mebibyte, one)) B/s); two centrals "
                + "\(Self.text(b)) s (B) and \(Self.text(c)) s (C), aggregate \(Self.bps(2 * Self.mebibyte, slower)) B/s, "
                + "\(Self.ratio(slower, one)) times one alone; wall clock for the pair " + String(format: "%.1f", push.wall)
                + " s (from starting the first listen)")
        }
    }

    /// Check 25c: `send --name --centrals 3` on hci0 pushes 1 MiB to `listen --to NAME` on hci1, hci2 and hci3 (the
    /// lab's fourth controller), served at once: all exit 0, every output is the message, send's three JSON lines
    /// name the three centrals. The note has the slowest central's time and the aggregate goodput against two
    /// centrals (OUT/t25.json) and one (OUT/t25a.json).
    @Test("send --name --centrals 3 (hci0) pushes 1 MiB to three subscribed centrals (hci1-hci3): all byte-identical",
        .tags(.hci0, .hci1, .hci2, .hci3), .enabled(if: Lab.Roles.hasD, "the lab has no fourth controller"))
    func pushToThreeCentrals() {
        LabCheck.run { lab in
            let env = lab.environment
            guard let addressC = env.addressC, let addressD = env.addressD else { return }
            let push = try Self.push(lab, name: "msgpipe-push3", to: [("hci1", env.addressB), ("hci2", addressC), ("hci3", addressD)],
                saveAs: "t25c.json")
            let slowest = push.lines.count == 3 ? push.lines.map(\.seconds).max() : nil
            let twoB = Self.savedSeconds("t25.json", peer: env.addressB), twoC = Self.savedSeconds("t25.json", peer: addressC)
            let two = twoB.flatMap { b in twoC.map { max(b, $0) } }
            lab.note("peripheral pushes 1 MiB to three centrals: slowest \(Self.text(slowest)) s, aggregate "
                + "\(Self.bps(3 * Self.mebibyte, slowest)) B/s; two centrals \(Self.bps(2 * Self.mebibyte, two)) B/s; "
                + "one \(Self.bps(Self.mebibyte, Self.savedSeconds("t25a.json"))) B/s")
        }
    }
}

extension Lab.Roles {
    /// `send --name NAME --json` on hci0 (with `--centrals N` for more than one) pushes `message` to `listen --to
    /// NAME --count 1` on each of `centrals` (`startCentrals`). Judges: every listen and send exit 0, each listen's
    /// output is the message byte for byte, send has one JSON line per central naming its address. send's output
    /// is copied to `OUT/saveAs`; returns its lines and the wall time from the first listen's start to send's end.
    static func push(_ lab: LabCheck, name: String, to centrals: [Central], saveAs: String) throws -> (lines: [SendLine], wall: Double) {
        let env = lab.environment
        let message = LabCheck.randomBytes(mebibyte)
        let file = try lab.file("mib.bin", message)
        let several = centrals.count > 1 ? ["--centrals", "\(centrals.count)"] : []
        let send = try lab.start("send", env.msgpipe, ["send"] + kernel + ["--adapter", "hci0", "--name", name] + several + ["--json", file.path])
        lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
        let started = Date()
        let listens = try startCentrals(lab, to: name, centrals, ["--count", "1"])
        for listen in listens { listen.wait(seconds: 300) }
        send.wait(seconds: 120)
        let wall = Date().timeIntervalSince(started)
        for listen in listens {
            lab.expectExit(listen)
            lab.expect(listen.stdout == message, "\(listen.label) wrote \(listen.stdout.count) bytes, not the 1 MiB message")
        }
        lab.expectExit(send)
        let lines = lab.expectSent(send, count: centrals.count, link: nil)
        for central in centrals {
            lab.expect(lines.contains { names($0.peer, central.address) }, "send --json has no line for \(central.adapter) (\(central.address))")
        }
        try? Data(send.stdout).write(to: env.outDirectory.appendingPathComponent(saveAs))
        return (lines, wall)
    }

    /// The `seconds` of a send --json line an earlier test or check saved as `OUT/name` (for `peer` when given);
    /// nil when that did not run.
    static func savedSeconds(_ name: String, peer: String? = nil) -> Double? {
        guard let env = LabEnvironment.current,
            let text = try? String(contentsOf: env.outDirectory.appendingPathComponent(name), encoding: .utf8)
        else { return nil }
        let lines = text.split(separator: "\n").compactMap { try? JSONDecoder().decode(SendLine.self, from: Data($0.utf8)) }
        return lines.first { line in peer.map { names(line.peer, $0) } ?? true }?.seconds
    }
}
