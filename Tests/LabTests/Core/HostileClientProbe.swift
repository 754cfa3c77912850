import Testing

extension Lab.Core {
    /// Check 8: the C hostile client (Tests/lab/att_hostile.c: malformed, truncated, oversized, out-of-order and
    /// 200 seeded random PDUs, seed 7) from hci1 neither crashes nor wedges `lab-probe serve` on hci0: once its
    /// link is gone, the Swift central on hci1 is served, and serve still runs.
    @Test("a hostile raw ATT client neither crashes nor wedges the Swift peripheral", .tags(.hci0, .hci1))
    func hostileClientProbe() {
        LabCheck.run { lab in
            let env = lab.environment
            let probe = try lab.startProbe(adapter: "hci0", name: "msgpipe-hostile", connections: 0)
            let hostile = try lab.run("att_hostile", lab.peer("att_hostile"), [env.addressB, env.addressA, "200", "7"], seconds: 120)
            // Else the next central could ride the hostile client's link (one ATT connection).
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            let connect = try lab.probeConnect(adapter: "hci1", to: "msgpipe-hostile")
            let running = probe.isRunning
            lab.stopProbe(probe, index: 0)
            lab.expectExit(hostile)
            lab.expect(hostile.stdoutText.contains("att_hostile: done"), "att_hostile did not finish its PDUs")
            lab.expectExchange(connect, peer: env.addressA, read: Self.probeValue)
            lab.expect(running, "lab-probe serve was no longer running after the hostile client: \(probe.exit.map(String.init(describing:)) ?? "?")")
        }
    }
}
