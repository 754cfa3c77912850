import Foundation
import Glibc
import Testing

extension Lab.Roles {
    /// Check 28f: one central on three peripherals. (a) `send --to fan-b --to fan-c --to fan-d` on hci0 sends
    /// 1 MiB to `listen --name --count 1` on hci1, hci2 and hci3 at once: all exit 0, each output is the message,
    /// send's three JSON lines name the three peers. (b) The same with hci3's listen a `msgpipe-lab listen
    /// --kill-after-bytes 300000`, which SIGKILLs itself mid-message having written nothing, and a new listen on
    /// hci3 started 2 s after it died: the central reconnects and sends hci3's message again, which arrives whole
    /// at the new listen; hci1 and hci2 finish; send exits 0. (c) `listen --to fan-s1 --to fan-s2 --to fan-s3
    /// --count 3 --json` on hci0 receives from three `send --name` on hci1-hci3: each line names its peer with the
    /// message's CRC-32. The note has the wall time of (a) against check 12's one alone (OUT/t12.json).
    @Test("one central on three peripherals: send --to x3 (1 MiB each), one killed and back, listen --to x3",
        .tags(.hci0, .hci1, .hci2, .hci3), .enabled(if: Lab.Roles.hasD, "the lab has no fourth controller"))
    func oneCentralThreePeripherals() {
        LabCheck.run { lab in
            let env = lab.environment
            let message = LabCheck.randomBytes(Self.mebibyte)
            let file = try lab.file("mib.bin", message)
            let names = ["fan-b", "fan-c", "fan-d"]
            let fanListen = { (h: Int, label: String, executable: String, extra: [String]) throws -> LabProcess in
                try lab.startListen(Self.kernel + ["--adapter", "hci\(h)", "--name", names[h - 1], "--count", "1"] + extra,
                    label: label, executable: executable)
            }
            let fanSend = { (label: String) throws -> LabProcess in
                try lab.start(label, env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci0"] + names.flatMap { ["--to", $0] }
                    + ["--json", file.path])
            }

            // (a) three at once
            let first = try (1...3).map { try fanListen($0, "listen-a-hci\($0)", env.msgpipe, []) }
            let started = Date()
            let sendA = try fanSend("send-a")
            sendA.wait(seconds: 600)
            let fan = Date().timeIntervalSince(started)
            for listen in first { listen.wait(seconds: 60) }
            lab.expectExit(sendA)
            for listen in first {
                lab.expectExit(listen)
                lab.expect(listen.stdout == message, "(a) \(listen.label) wrote \(listen.stdout.count) bytes, not the 1 MiB message")
            }
            let peers = Set(sendA.jsonLines(SendLine.self).compactMap(\.peer))
            lab.expect(peers == Set(names) && sendA.jsonLines(SendLine.self).count == 3, "(a) send --json's results name \(peers.sorted()), expected one per peer")
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)

            // (b) hci3's listen kills itself mid-message; a new one comes 2 s later
            let kept = try (1...2).map { try fanListen($0, "listen-b-hci\($0)", env.msgpipe, []) }
            let killed = try fanListen(3, "listen-b-hci3-killed", env.msgpipeLab, ["--kill-after-bytes", "300000"])
            let sendB = try fanSend("send-b")
            killed.wait(seconds: 120)
            lab.expectExit(killed, .signal(SIGKILL))
            lab.expect(killed.stderr.contains("killing itself after"), "(b) hci3's first listen never said it killed itself mid-message")
            lab.expect(killed.stdout.isEmpty, "(b) the killed listen wrote \(killed.stdout.count) bytes, expected nothing")
            Thread.sleep(forTimeInterval: 2)
            let again = try lab.start("listen-b-hci3", env.msgpipe, ["listen"] + Self.kernel + ["--adapter", "hci3", "--name", "fan-d", "--count", "1"])
            sendB.wait(seconds: 600)
            for listen in kept + [again] { listen.wait(seconds: 60) }
            lab.expectExit(sendB)
            for listen in kept + [again] {
                lab.expectExit(listen)
                lab.expect(listen.stdout == message, "(b) \(listen.label) wrote \(listen.stdout.count) bytes, not the 1 MiB message")
            }
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)

            // (c) listen --to x3 from three send --name
            let small = (1...3).map { _ in LabCheck.randomBytes(20_000 + Int.random(in: 0..<32_768)) }
            let listen = try Self.listenToPeripherals(lab, try (1...3).map { ("fan-s\($0)", try lab.file("small\($0).bin", small[$0 - 1])) }, [],
                seconds: 300)
            let lines = listen.jsonLines(ListenLine.self)
            for h in 1...3 {
                lab.expect(lines.contains { $0.peer == "fan-s\(h)" && $0.crc32 == crc32Hex(small[h - 1]) },
                    "(c) listen --json has no message from fan-s\(h) with its CRC-32")
            }
            lab.note("1 MiB to three peripherals at once: " + String(format: "%.1f", fan)
                + " s wall clock (one alone, check 12: \(Self.text(Self.savedSeconds("t12.json"))) s)")
        }
    }
}
