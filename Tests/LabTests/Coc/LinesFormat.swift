import Testing

extension Lab.Coc {
    /// A plain format over the channel: the stream holds the format's own bytes (PROTOCOL.md 7.2). Three lines
    /// sent with --format lines arrive as three messages.
    @Test("send --format lines over the channel: the stream carries the lines unframed, three messages arrive",
        .tags(.kernel, .hci0, .hci1))
    func linesFormat() {
        LabCheck.run { lab in
            let env = lab.environment
            let long = [UInt8](repeating: UInt8(ascii: "x"), count: 3000)
            let files = try [Array("one".utf8), Array("two".utf8), long].enumerated().map { try lab.file("line\($0.offset).txt", $0.element) }
            let listen = try lab.start("listen", env.msgpipe, ["listen"] + Self.kernel + [
                "--adapter", "hci0", "--name", "msgpipe-cocl", "--format", "lines", "--connections", "1"])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-cocl", "--format", "lines", "--json"] + files.map(\.path), seconds: 120)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            let expected = Array("one\ntwo\n".utf8) + long + [UInt8(ascii: "\n")]
            lab.expect(listen.stdout == expected, "listen wrote \(listen.stdout.count) bytes, not the three lines intact")
            lab.expectSent(send, count: 3, link: "l2cap")
        }
    }
}
