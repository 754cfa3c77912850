import Testing

extension Lab.Coc {
    /// The other way round: the peripheral sends (send --name on hci0), the central listens (listen --to on
    /// hci1), opens the channel and receives 1 MiB byte-identical.
    @Test("send --name (hci0) -> listen --to (hci1): the peripheral pushes 1 MiB over the channel, byte-identical",
        .tags(.kernel, .hci0, .hci1))
    func peripheralPushes() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("message.bin", message)
            let env = lab.environment
            let send = try lab.start("send", env.msgpipe, ["send"] + Self.kernel + [
                "--adapter", "hci0", "--name", "msgpipe-cocp", "--json", file.path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
            let listen = try lab.run("listen", env.msgpipe, ["listen"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-cocp", "--count", "1", "--json"], seconds: 300)
            send.wait(seconds: 120)
            lab.expectExit(listen)
            lab.expectExit(send)
            // The central knows its link: it must name the channel.
            lab.expectOneMessage(listen, message, link: "l2cap", linkRequired: true)
            let sent = lab.expectSent(send, count: 1, link: nil)
            lab.note("1 MiB, send --name over the channel: \(LabCheck.rate(Self.mebibyte, sent.first?.seconds))")
        }
    }
}
