import Testing

extension Lab.Coc {
    /// btmon decodes the channel's set-up: an LE credit-based connection request (BlueZ 5.66's btmon names it
    /// "LE Connection Request") with its PSM, for a message this test sends over the channel.
    @Test("btmon shows the LE credit-based connection requests", .tags(.kernel, .hci0, .hci1))
    func btmonSignalling() {
        LabCheck.run { lab in
            let message = LabCheck.randomBytes(4096)
            let file = try lab.file("message.bin", message)
            let env = lab.environment
            let listen = try lab.start("listen", env.msgpipe, ["listen"] + Self.kernel + [
                "--adapter", "hci0", "--name", "msgpipe-cocm", "--count", "1", "--json"])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + [
                "--adapter", "hci1", "--to", "msgpipe-cocm", "--json", file.path], seconds: 120)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expectSent(send, count: 1, link: "l2cap")
            // btmon is the only witness here: its decoded text is what there is to read.
            let lines = lab.btmonSinceStart().split(separator: "\n")
            let requests = lines.indices.filter {
                lines[$0].contains("LE Connection Request") || lines[$0].contains("LE Credit Based Connection Request")
            }
            lab.expect(!requests.isEmpty, "no LE credit-based connection request in btmon")
            let psms = requests.compactMap { start in
                lines[(start + 1)..<min(start + 7, lines.count)].first { line in
                    guard let range = line.range(of: "PSM: ") else { return false }
                    return line[range.upperBound...].first?.isNumber == true
                }
            }
            lab.expect(!psms.isEmpty, "no PSM in btmon's LE credit-based connection requests")
        }
    }
}
