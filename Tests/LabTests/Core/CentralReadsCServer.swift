import Testing

extension Lab.Core {
    /// Check 1: the Swift central (`lab-probe connect`, ATTConnector on hci1) against the C ATT server on hci0,
    /// which hci0's own advertising makes connectable: Exchange MTU and Read of handle 3 work; the server then
    /// ends after its one connection.
    @Test("swift L2CAP central exchanges MTU and reads from the C ATT server", .tags(.hci0, .hci1))
    func centralReadsCServer() {
        LabCheck.run { lab in
            let env = lab.environment
            lab.controllerAdvertising(true)
            defer { lab.controllerAdvertising(false) }
            let server = try lab.start("att_server", lab.peer("att_server"), [env.addressA, "1"])
            lab.expect(server.waitForStdout(containing: "listening"), "att_server never listened")
            let connect = try lab.probeConnect(adapter: "hci1", to: env.addressA)
            server.wait(seconds: 30)
            lab.expectExchange(connect, peer: env.addressA, read: Self.serverValue)
            lab.expectExit(server)
        }
    }
}
