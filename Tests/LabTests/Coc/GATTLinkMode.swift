import Testing

extension Lab.Coc {
    /// The same listener, the central forcing GATT (--link-mode gatt): GATT carries 1 MiB byte-identical.
    @Test("send --link-mode gatt to the same listener: GATT carries 1 MiB byte-identical", .tags(.kernel, .hci0, .hci1))
    func gattLinkMode() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("message.bin", message)
            let env = lab.environment
            let listen = try lab.start("listen", env.msgpipe, ["listen"] + Self.kernel + [
                "--adapter", "hci0", "--name", "msgpipe-cocg", "--count", "1", "--json"])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-cocg", "--link-mode", "gatt", "--json", file.path], seconds: 300)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expectOneMessage(listen, message, link: "gatt", linkRequired: false)
            let sent = lab.expectSent(send, count: 1, link: "gatt")
            lab.note("1 MiB goodput, send over GATT: \(LabCheck.rate(Self.mebibyte, sent.first?.seconds))")
        }
    }
}
