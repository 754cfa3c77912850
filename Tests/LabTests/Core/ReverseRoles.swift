import Testing

extension Lab.Core {
    /// Check 6: the roles the other way round: `lab-probe serve` on hci1, the Swift central on hci0 by address.
    @Test("reverse roles: swift central on hci0 -> swift peripheral on hci1", .tags(.hci0, .hci1))
    func reverseRoles() {
        LabCheck.run { lab in
            let env = lab.environment
            let probe = try lab.startProbe(adapter: "hci1", name: "msgpipe-lab-b", connections: 1)
            let connect = try lab.probeConnect(adapter: "hci0", to: env.addressB)
            probe.wait(seconds: 60)
            lab.expectExchange(connect, peer: env.addressB, read: Self.probeValue)
            lab.expectExit(probe)
        }
    }
}
