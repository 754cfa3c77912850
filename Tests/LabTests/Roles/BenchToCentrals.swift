import Testing

extension Lab.Roles {
    /// Check 25f, goodput the other way: `msgpipe bench --name` on hci0 is the peripheral and pushes 4 x 256 KiB by
    /// notification to the centrals that subscribe, first `listen --to NAME --count 4` on hci1 alone, then (`bench
    /// --centrals 2`) on hci1 and hci2 at once. bench exit 0 means every central acknowledged every message through
    /// Transport; each listen exits 0 with four 256 KiB messages; bench's rows are `to_centrals`, one per central
    /// naming its address with the ATT MTU 517 and a PHY, and with two the aggregate (`central` "all"). The note has
    /// the goodput with one central and with two.
    @Test("bench --name (hci0) pushes 4 x 256 KiB to one central, then to two at once (listen --to on hci1, hci2): all acknowledged",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Roles.hasC, "the lab has no third controller"))
    func benchToCentrals() {
        LabCheck.run { lab in
            let env = lab.environment
            guard let addressC = env.addressC else { return }
            let one = try Self.benchPush(lab, name: "msgpipe-bench1", to: [("hci1", env.addressB)])
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            let two = try Self.benchPush(lab, name: "msgpipe-bench2", to: [("hci1", env.addressB), ("hci2", addressC)])
            lab.expect(two.contains { $0.central == "all" }, "bench --centrals 2 has no aggregate row (central \"all\")")
            let kbps = { (rows: [BenchLine], central: String) in rows.first { $0.central == central }?.goodputKbps.map { "\($0)" } ?? "?" }
            lab.note("bench --name (peripheral to centrals, 1 MiB each in 4 messages): one central \(kbps(one, "0")) kbit/s; "
                + "two at once \(kbps(two, "0")) and \(kbps(two, "1")) kbit/s, aggregate \(kbps(two, "all")) kbit/s")
        }
    }

    /// `bench --name NAME --size 262144 --messages 4 --json` on hci0 (`--centrals N` for more than one) pushes to
    /// `listen --to NAME --count 4 --json` on each of `centrals` (`startCentrals`).
    /// Judges the exits, each listen's four 256 KiB messages and bench's row per central; returns bench's rows.
    static func benchPush(_ lab: LabCheck, name: String, to centrals: [Central]) throws -> [BenchLine] {
        let env = lab.environment
        let several = centrals.count > 1 ? ["--centrals", "\(centrals.count)"] : []
        let label = "bench-\(centrals.count)"
        let bench = try lab.start(label, env.msgpipe, ["bench"] + kernel + ["--adapter", "hci0", "--name", name] + several
            + ["--size", "262144", "--messages", "4", "--json"])
        lab.expect(bench.waitForStderr(containing: "advertising"), "\(label) never advertised")
        let listens = try startCentrals(lab, to: name, centrals, ["--count", "4", "--json"], suffix: "-\(centrals.count)")
        for listen in listens { listen.wait(seconds: 300) }
        bench.wait(seconds: 120)
        lab.expectExit(bench)
        for listen in listens {
            lab.expectExit(listen)
            let sizes = listen.jsonLines(ListenLine.self).map(\.bytes)
            lab.expect(sizes == [262_144, 262_144, 262_144, 262_144], "\(listen.label): messages of \(sizes) bytes, expected four of 262144")
        }
        let rows = bench.jsonLines(BenchLine.self)
        for central in centrals {
            guard let row = rows.first(where: { Self.names($0.peer, central.address) }) else {
                lab.fail("\(label) --json has no row for \(central.adapter) (\(central.address))")
                continue
            }
            lab.expect(row.direction == "to_centrals", "\(label): direction \(row.direction ?? "absent") for \(central.adapter), expected to_centrals")
            lab.expect(row.mtu == 517, "\(label): ATT MTU \(row.mtu.map(String.init) ?? "unknown") for \(central.adapter), expected 517")
            lab.expect(row.phyIsNamed, "\(label): phy \(row.phy ?? "absent") for \(central.adapter) is not a PHY")
        }
        return rows
    }
}
