import Testing

extension Lab.Core {
    /// Check 3b: while `lab-probe serve` on hci0 advertises its own service, `msgpipe scan --service FFF0` on hci1
    /// finds nothing and exits 1.
    @Test("msgpipe scan filtered by an absent service finds nothing (exit 1)", .tags(.hci0, .hci1))
    func scanFilterFindsNothing() {
        LabCheck.run { lab in
            let probe = try lab.startProbe(adapter: "hci0", name: "msgpipe-lab", connections: 1, ["--service", Self.service])
            let scan = try lab.run("scan", lab.environment.msgpipe, ["scan", "--adapter", "hci1", "--service", "FFF0", "--timeout", "3", "--json"], seconds: 60)
            lab.stopProbe(probe, index: 0)
            lab.expectExit(scan, .status(1))
            lab.expect(scan.jsonLines([ScannedPeerLine].self).allSatisfy(\.isEmpty),
                "scan --service FFF0 listed peers: \(scan.stdoutText)")
        }
    }
}
