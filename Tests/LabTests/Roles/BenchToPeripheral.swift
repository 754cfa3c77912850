import Testing

extension Lab.Roles {
    /// Check 25e: `msgpipe bench --to NAME` on hci1 sends 4 x 256 KiB through Transport into `listen --connections 1`
    /// on hci0: both exit 0; bench's JSON row says completed, 4 messages delivered, the ATT MTU 517, a PHY as the
    /// kernel tells it ("unknown" here: the kernel learns it only from an LE PHY Update Complete, which btvirt sends
    /// only after an LE Set PHY, and nothing here issues one; the decoding is unit-tested) and the simulator's limit
    /// for it. The note has the goodput, the PHY and the limit.
    @Test("msgpipe bench --to NAME over a real link reports goodput, the ATT MTU and the PHY the kernel tells",
        .tags(.hci0, .hci1))
    func benchToPeripheral() {
        LabCheck.run { lab in
            let env = lab.environment
            let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-bench", "--connections", "1"])
            let bench = try lab.run("bench", env.msgpipe, ["bench"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-bench", "--size", "262144", "--messages", "4", "--json"], seconds: 300)
            listen.wait(seconds: 60)
            lab.expectExit(bench)
            lab.expectExit(listen)
            let rows = bench.jsonLines(BenchLine.self)
            lab.expect(rows.count == 1, "bench --json: \(rows.count) rows, expected 1")
            guard let row = rows.first else { return }
            lab.expect(row.completed == true, "bench: completed \(row.completed.map(String.init) ?? "absent")")
            lab.expect(row.messagesDelivered == 4, "bench: \(row.messagesDelivered.map(String.init) ?? "no") messages delivered, expected 4")
            lab.expect(row.mtu == 517, "bench: ATT MTU \(row.mtu.map(String.init) ?? "unknown"), expected 517")
            lab.expect(row.phyIsNamed, "bench: phy \(row.phy ?? "absent") is not a PHY")
            lab.expect(row.limitKbps != nil, "bench: no simulator's limit (limit_kbps)")
            lab.note("bench --to (1 MiB in 4 messages): \(row.goodputKbps.map { "\($0)" } ?? "?") kbit/s, phy \(row.phy ?? "?"), "
                + "simulator's limit \(row.limitKbps.map { "\($0)" } ?? "?") kbit/s")
        }
    }
}
