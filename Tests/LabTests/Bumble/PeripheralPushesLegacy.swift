import Testing

extension Lab.Bumble {
    /// bumble 4: a phone peripheral advertises the FFF0 layout from a random static address and notifies 64 KiB
    /// in legacy once subscribed; `listen --to bumble-phone` finds it by name, connects to that random address,
    /// subscribes and takes the message byte-identical.
    @Test("bumble peripheral (random address, FFF0 layout) pushes legacy to msgpipe listen --to NAME: byte-identical", .tags(.hci3))
    func peripheralPushesLegacy() {
        BumbleLab.run { bumble in
            let lab = bumble.lab
            let bytes = LabCheck.randomBytes(65_536)
            let file = try lab.file("kib64.bin", bytes)
            let phone = try bumble.startPeer("bumble", "bumble_peripheral.py", [
                "--name", "bumble-phone", "--service", "FFF0", "--write", "FFF2", "--notify", "FFF1", "--format", "legacy",
                "--send", file.path, "--timeout", "90"])
            lab.expect(phone.waitForStdout(containing: "advertising"), "Bumble never advertised")
            let listen = try lab.run("listen", lab.environment.msgpipe, ["listen"] + BumbleLab.kernel + [
                "--adapter", "hci0", "--to", "bumble-phone", "--format", "legacy", "--profile", BumbleLab.profile(BumbleLab.legacy),
                "--count", "1", "--json"], seconds: 150)
            phone.wait(seconds: 60)
            let report = bumble.report(phone)
            lab.expectExit(listen)
            lab.expectExit(phone)
            lab.expectOneMessage(listen, bytes, link: "gatt", linkRequired: false)
            lab.expect(report?.subscribedBy?.uppercased() == lab.environment.addressA.uppercased(),
                "Bumble was subscribed by \(report?.subscribedBy ?? "nobody"), expected hci0 (\(lab.environment.addressA))")
            lab.expect(LabBumble.isRandomStatic(report?.ownAddress), "Bumble's own address \(report?.ownAddress ?? "unknown") is not random static")
            lab.expect(BumbleLab.connected(listen, to: report?.ownAddress, random: true),
                "listen never said it connected to Bumble's random address \(report?.ownAddress ?? "unknown")")
            lab.note("bumble: peripheral -> listen --to, legacy: \(report?.numbers ?? "no numbers")")
        }
    }
}
