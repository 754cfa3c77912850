import Testing

extension Lab.Core {
    /// Checks 5 and 5b run this, each judging its own side: `lab-probe serve` on hci0 serves two centrals in turn,
    /// gatttool on hci1 first (a Read of handle 3), then, once that link is gone, the Swift central on hci1 by the
    /// advertised name: the peripheral advertised again after the first central left. Ends once serve exited.
    static func twoCentralsInTurn(_ lab: LabCheck) throws -> (serve: LabProcess, connect: LabProcess) {
        let probe = try lab.startProbe(adapter: "hci0", name: "msgpipe-lab", connections: 2, ["--service", service])
        let gatttool = try lab.run("gatttool", "/usr/bin/gatttool", [
            "-i", "hci1", "-b", lab.environment.addressA, "-t", "public", "--char-read", "-a", "0x0003"], seconds: 60)
        lab.expectExit(gatttool)
        // Else the central could ride gatttool's lingering link instead of finding the advertisement.
        _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
        let connect = try lab.probeConnect(adapter: "hci1", to: "msgpipe-lab")
        probe.wait(seconds: 60)
        return (probe, connect)
    }

    /// Check 5: the central's side of `twoCentralsInTurn`.
    @Test("swift central finds the peripheral by name after it re-advertised, and exchanges MTU", .tags(.hci0, .hci1))
    func connectByName() {
        LabCheck.run { lab in
            let (_, connect) = try Self.twoCentralsInTurn(lab)
            lab.expectExchange(connect, peer: lab.environment.addressA, read: Self.probeValue)
        }
    }

    /// Check 5b: the peripheral's side of `twoCentralsInTurn`: both centrals (hci1) connected, the Swift central's
    /// Exchange MTU (247) and Read of handle 3 arrived, and serve ended by itself after the second (exit 0).
    @Test("swift peripheral served two centrals in turn", .tags(.hci0, .hci1))
    func servedTwoInTurn() {
        LabCheck.run { lab in
            let (serve, _) = try Self.twoCentralsInTurn(lab)
            lab.expectExit(serve)
            let output = serve.stdoutText
            let connections = output.components(separatedBy: "connection from \(lab.environment.addressB)").count - 1
            lab.expect(connections == 2, "serve saw \(connections) connections from \(lab.environment.addressB), expected 2")
            lab.expect(output.contains("RX 02 f7 00\n"), "serve never got the Swift central's Exchange MTU Request (247)")
            lab.expect(output.contains("RX 0a 03 00\n"), "serve never got a Read Request of handle 3")
        }
    }
}
