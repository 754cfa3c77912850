import Testing

extension Lab.Roles {
    /// seed 000_*'s layout: service FFF0, the central writes FFF2, notify FFF1.
    static let legacyProfile = "custom:FFF0:FFF2:FFF1"

    /// Check 26b: the legacy format (the seeds' Start/End) from a peripheral in seed 000_*'s layout: `send --name
    /// --format legacy --profile custom:FFF0:FFF2:FFF1` on hci0 pushes 32 KiB into `listen --to NAME` with the
    /// same format and profile on hci1: both exit 0, listen's output is the message byte for byte.
    @Test("legacy from a peripheral (custom:FFF0:FFF2:FFF1) into msgpipe listen --to NAME --format legacy: byte-identical",
        .tags(.hci0, .hci1))
    func legacyIntoListen() {
        LabCheck.run { lab in
            let env = lab.environment
            let message = LabCheck.randomBytes(32_768)
            let file = try lab.file("legacy.bin", message)
            let legacy = ["--format", "legacy", "--profile", Self.legacyProfile]
            let send = try lab.start("send", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-legacy2"]
                + legacy + [file.path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
            let listen = try lab.run("listen", env.msgpipe, ["listen"] + Self.kernel + ["--adapter", "hci1", "--to", "msgpipe-legacy2"]
                + legacy + ["--count", "1"], seconds: 120)
            send.wait(seconds: 60)
            lab.expectExit(listen)
            lab.expectExit(send)
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 32 KiB message")
        }
    }
}
