import Testing

extension Lab.Coc {
    /// The central reads the PSM characteristic, opens the channel (link mode auto), and 1 MiB arrives
    /// byte-identical; listen ends after the message (--count 1).
    @Test("send --to (hci1) -> listen --name (hci0), link mode auto: the channel carries 1 MiB byte-identical",
        .tags(.kernel, .hci0, .hci1))
    func autoModeChannel() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("message.bin", message)
            let env = lab.environment
            let listen = try lab.start("listen", env.msgpipe, ["listen"] + Self.kernel + [
                "--adapter", "hci0", "--name", "msgpipe-coc", "--count", "1", "--json", "--verbose"])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-coc", "--json", "--verbose", file.path], seconds: 300)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expectOneMessage(listen, message, link: "l2cap", linkRequired: false)
            let sent = lab.expectSent(send, count: 1, link: "l2cap")
            // The peripheral opened its channel listener beside GATT (no JSON names the PSM).
            lab.expect(listen.stderr.contains(" beside GATT") && listen.stderr.contains("L2CAP channel on PSM 0x"),
                "listen --verbose never said it serves an L2CAP channel on a PSM beside GATT")
            lab.note("1 MiB goodput, send over the channel: \(LabCheck.rate(Self.mebibyte, sent.first?.seconds))")
        }
    }
}
