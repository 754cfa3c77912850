import Testing

extension Lab.Core {
    /// Check 2: with the C ATT server holding hci0's ATT channel, `lab-probe serve` on hci0 refuses at once with
    /// exit 2 and an error that names the remedy, instead of waiting forever.
    @Test("a busy ATT channel is reported with the remedy", .tags(.hci0))
    func busyATTChannel() {
        LabCheck.run { lab in
            let server = try lab.start("att_server", lab.peer("att_server"), [lab.environment.addressA, "1"])
            lab.expect(server.waitForStdout(containing: "listening"), "att_server never listened")
            let serve = try lab.run("serve", lab.environment.msgpipeLab, ["lab-probe", "serve", "--adapter", "hci0"], seconds: 60)
            server.stop(seconds: 10)
            lab.expectExit(serve, .status(2))
            lab.expect(serve.stderr.contains("already in use"), "lab-probe serve's error does not say the channel is already in use")
            lab.expect(serve.stderr.contains("stop bluetoothd"), "lab-probe serve's error does not name the remedy (stop bluetoothd)")
        }
    }
}
