import Testing

extension Lab.Core {
    /// Check 14: the C hostile client (as in check 8) from hci1 against `msgpipe listen --json` on hci0; once its
    /// link is gone, `msgpipe send` from hci1 delivers a message, and listen still runs.
    @Test("a hostile raw ATT client neither crashes nor wedges msgpipe listen; the next send is delivered", .tags(.hci0, .hci1))
    func hostileClientListen() {
        LabCheck.run { lab in
            let env = lab.environment
            let text = Array("after the storm".utf8)
            let file = try lab.file("storm.txt", text)
            let listen = try lab.startListen(["--adapter", "hci0", "--name", "msgpipe-hostile-l", "--json"])
            let hostile = try lab.run("att_hostile", lab.peer("att_hostile"), [env.addressB, env.addressA, "200", "7"], seconds: 120)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            let send = try lab.run("send", env.msgpipe, ["send", "--adapter", "hci1", "--to", "msgpipe-hostile-l", file.path], seconds: 120)
            let running = listen.isRunning
            listen.stop(seconds: 30)
            lab.expectExit(hostile)
            lab.expect(hostile.stdoutText.contains("att_hostile: done"), "att_hostile did not finish its PDUs")
            lab.expectExit(send)
            lab.expect(running, "listen was no longer running after the hostile client and the send")
            lab.expectExit(listen)
            let lines = listen.jsonLines(ListenLine.self)
            lab.expect(lines.contains { $0.body == text && $0.crc32 == crc32Hex(text) }, "listen --json has no message \"after the storm\" (\(lines.count) messages)")
        }
    }
}
