import Testing

extension Lab.Core {
    /// Check 4: BlueZ's gatttool on hci1 reads handle 3 from `lab-probe serve` (ATTListener and Advertiser on hci0),
    /// which then ends after its one central.
    @Test("gatttool reads from the Swift L2CAP peripheral", .tags(.hci0, .hci1))
    func gatttoolReads() {
        LabCheck.run { lab in
            let probe = try lab.startProbe(adapter: "hci0", name: "msgpipe-lab", connections: 1, ["--service", Self.service])
            let gatttool = try lab.run("gatttool", "/usr/bin/gatttool", [
                "-i", "hci1", "-b", lab.environment.addressA, "-t", "public", "--char-read", "-a", "0x0003"], seconds: 60)
            probe.wait(seconds: 60)
            lab.expectExit(gatttool)
            let value = LabCheck.gatttoolValue(gatttool.stdoutText + gatttool.stderr)
            lab.expect(value == Array(Self.probeValue.utf8), "gatttool read \(value.map { "\($0)" } ?? "nothing"), expected \"\(Self.probeValue)\"")
            lab.expectExit(probe)
        }
    }
}
