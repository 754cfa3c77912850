import Foundation
import Testing

extension Lab.StockBox {
    /// Check 30: the reverse roles through bluetoothd: `send --name` on hci0 pushes 1 MiB by notification to
    /// `listen --to NAME --count 1` on hci1, which subscribed through AcquireNotify: byte-identical, both exit 0.
    @Test("stock box: send --name (peripheral, hci0) -> listen --to (central, hci1) through bluetoothd: 1 MiB byte-identical",
        .tags(.hci0, .hci1))
    func sendNameToListenTo() {
        Self.run { lab, _ in
            let env = lab.environment
            let message = LabCheck.randomBytes(Self.mebibyte)
            let send = try lab.start("send", env.msgpipe, ["send"] + Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-rev", "--json",
                try lab.file("mib.bin", message).path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
            let listen = try lab.run("listen", env.msgpipe, ["listen"] + Self.bluez + ["--adapter", "hci1", "--to", "msgpipe-rev", "--count", "1"],
                seconds: 300)
            send.wait(seconds: 60)
            lab.expectExit(listen)
            lab.expectExit(send)
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 1 MiB message")
            let seconds = send.jsonLines(SendLine.self).first?.seconds
            lab.note("stock box: 1 MiB from send --name (hci0) to listen --to (hci1) through bluetoothd in \(seconds.map { "\($0)" } ?? "?") s")
        }
    }

    /// Check 30b: the seeds' receiving phone through bluetoothd: `send --name --format legacy` on hci0 (seed
    /// 000_*'s layout, custom:FFF0:FFF2:FFF1) pushes 4 KiB to bleak on hci1, a central that only subscribes and
    /// writes nothing. send exits 0 and says EATT may reorder the values; bleak's values, checked by
    /// legacy_decode.py, are exactly the file's pieces, each once (bluetoothd 5.66's EATT bearers may reorder
    /// them: the note says whether they came in order).
    @Test("stock box: send --name --format legacy (hci0, through bluetoothd) to bleak (hci1) that only subscribes: every piece once",
        .tags(.hci0, .hci1))
    func legacyToSubscribingBleak() {
        Self.run(unless: Self.hasBleak ? nil : "bleak is not installed (Scripts/blelab.sh --setup-bleak)") { lab, _ in
            let file = try lab.file("kib4.bin", LabCheck.randomBytes(4096))
            let send = try lab.start("send", lab.environment.msgpipe, ["send"] + Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-plain",
                "--format", "legacy", "--profile", "custom:FFF0:FFF2:FFF1", file.path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
            let bleak = try Self.startPython(lab, "bleak", "bleak_central.py", ["--adapter", "hci1", "--name", "msgpipe-plain",
                "--rx", "0000fff2-0000-1000-8000-00805f9b34fb", "--tx", "0000fff1-0000-1000-8000-00805f9b34fb", "--hold", "8"])
            bleak.wait(seconds: 120)
            send.wait(seconds: 30)
            lab.expectExit(bleak)
            lab.expectExit(send)
            lab.expect(send.stderr.contains("may carry values over several ATT"), "send never warned that bluetoothd's EATT may reorder the values")
            let (decoder, _) = try Self.legacyDecode(lab, "legacy_decode", bleak.stdoutFile, tiles: file)
            lab.expectExit(decoder)
            lab.expect(decoder.stdoutText.contains("values tile the 4096 bytes"), "bleak's values are not exactly the file's pieces: \(decoder.stdoutText)")
            for line in decoder.stdoutText.split(separator: "\n") where line.hasPrefix("legacy_decode:") {
                lab.note("stock box: legacy to bleak through bluetoothd: \(line)")
            }
        }
    }

    /// Check 33: two centrals at once into one listen through bluetoothd 5.66, which hands every device the same
    /// acquired sockets: listen serves one central at a time (it says so), taking its advertisement away during a
    /// turn; hci2's send starts once hci1's connected and gets its turn within --connect-timeout. Both exit 0,
    /// both 256 KiB arrive once.
    @Test("stock box: two centrals (hci1, hci2) send 256 KiB each at once into one listen through bluetoothd 5.66: served one at a time, both whole, once",
        .tags(.hci0, .hci1, .hci2))
    func twoCentralsInTurns() {
        Self.run(unless: Self.hasC ? nil : "needs a third controller (BLELAB_BTVIRT=-L -l3)") { lab, _ in
            let env = lab.environment
            let first = LabCheck.randomBytes(Self.kibibytes256), second = LabCheck.randomBytes(Self.kibibytes256)
            let listen = try lab.startListen(Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-two", "--verbose", "--json"])
            let started = Date()
            let send = { (adapter: String, file: URL) in
                try lab.start("send-\(adapter)", env.msgpipe, ["send"] + Self.bluez + ["--adapter", adapter, "--to", "msgpipe-two",
                    "--connect-timeout", "150", "--verbose", "--json", file.path])
            }
            let b = try send("hci1", try lab.file("kib256.bin", first))
            // Started together, hci2's Create Connection to an advertiser that stopped at that moment hung in the emulator.
            lab.expect(b.waitForStderr(containing: "connected to", seconds: 120), "hci1's send never connected")
            let c = try send("hci2", try lab.file("kib256b.bin", second))
            b.wait(seconds: 300)
            c.wait(seconds: 300)
            let both = Date().timeIntervalSince(started)
            Thread.sleep(forTimeInterval: 1)
            listen.stop()
            lab.expectExit(b)
            lab.expectExit(c)
            lab.expectExit(listen)
            lab.expect(listen.stderr.contains("one central at a time (bluetoothd 5"), "listen never said it serves one central at a time through bluetoothd")
            lab.expectEachOnce([("hci1's 256 KiB", first), ("hci2's 256 KiB", second)], in: listen.jsonLines(ListenLine.self))
            let seconds = { (send: LabProcess) in send.jsonLines(SendLine.self).first.map { "\($0.seconds)" } ?? "?" }
            lab.note("stock box: two centrals, 256 KiB each, at once through bluetoothd: both done after "
                + String(format: "%.1f", both) + " s; each \(seconds(b)) s and \(seconds(c)) s")
        }
    }

    /// Check 33f: one central on three peripherals through bluetoothd: `listen --name sb-fanN --count 1` on hci1-hci3,
    /// one `send --to sb-fan1 --to sb-fan2 --to sb-fan3` of 256 KiB on hci0 (its connects take turns): every
    /// listen writes the file, send exits 0 with one JSON result per peer.
    @Test("stock box: one central (hci0) on three peripherals (hci1-hci3) through bluetoothd: 256 KiB to each, all whole",
        .tags(.hci0, .hci1, .hci2, .hci3))
    func oneCentralOnThreePeripherals() {
        Self.run(unless: Self.hasD ? nil : "needs a fourth controller") { lab, _ in
            // The suite powers hci0-hci2 through bluetoothd; the third peripheral is hci3.
            for index in LabCheck.powerThroughBluetoothd([3]) { lab.fail("bluetoothd did not power hci\(index) within 30 s") }
            let message = LabCheck.randomBytes(Self.kibibytes256)
            let names = (1...3).map { "sb-fan\($0)" }
            let listens = try (1...3).map { h in
                try lab.start("listen-hci\(h)", lab.environment.msgpipe, ["listen"] + Self.bluez + ["--adapter", "hci\(h)", "--name", names[h - 1],
                    "--count", "1"])
            }
            for listen in listens { lab.expect(listen.waitForStderr(containing: "advertising"), "\(listen.label) never advertised") }
            let started = Date()
            let send = try lab.run("send", lab.environment.msgpipe, ["send"] + Self.bluez + ["--adapter", "hci0"] + names.flatMap { ["--to", $0] }
                + ["--connect-timeout", "120", "--json", try lab.file("kib256.bin", message).path], seconds: 400)
            let seconds = Date().timeIntervalSince(started)
            for listen in listens { listen.wait(seconds: 60) }
            lab.expectExit(send)
            for listen in listens {
                lab.expectExit(listen)
                lab.expect(listen.stdout == message, "\(listen.label) wrote \(listen.stdout.count) bytes, not the 256 KiB message")
            }
            let lines = send.jsonLines(SendLine.self)
            lab.expect(lines.count == 3 && Set(lines.compactMap(\.peer)) == Set(names),
                "send --json: \(lines.count) results naming \(lines.compactMap(\.peer)), expected one per peer")
            lab.note("stock box: 256 KiB to three peripherals at once through bluetoothd: done after " + String(format: "%.1f", seconds) + " s")
        }
    }

    /// Check 33b: an independent second central takes the turn: bleak on hci2 (`bleak_central.py --hold 12`)
    /// subscribes to listen on hci0 and holds its link 12 s writing nothing while `send --connect-timeout 90` on
    /// hci1 waits; a connection without a hello is closed after 10 s, which ends bleak's turn. bleak stays
    /// connected the whole time (msgpipe never disconnects a device), the send is done no sooner than 11 s after
    /// bleak subscribed, and its 256 KiB arrive once. When bluetoothd 5.66 dropped bleak's link in service
    /// discovery in all of its tries (EATT, not msgpipe), bleak never subscribed: a skip, with that evidence.
    @Test("stock box: bleak (hci2) subscribes to listen through bluetoothd and writes nothing; the waiting send (hci1) gets the turn, 256 KiB once",
        .tags(.hci0, .hci1, .hci2))
    func bleakHoldsTheTurn() {
        let why = !Self.hasC ? "needs a third controller (BLELAB_BTVIRT=-L -l3)" : !Self.hasBleak ? "bleak is not installed (Scripts/blelab.sh --setup-bleak)" : nil
        Self.run(unless: why) { lab, _ in
            let message = LabCheck.randomBytes(Self.kibibytes256)
            let listen = try lab.startListen(Self.bluez + ["--adapter", "hci0", "--name", "msgpipe-held", "--verbose", "--json"])
            let bleak = try Self.startPython(lab, "bleak", "bleak_central.py", ["--adapter", "hci2", "--name", "msgpipe-held", "--hold", "12"])
            Lab.Roles.waitUntil(seconds: 120) {
                let out = bleak.stdoutText
                return !bleak.isRunning || ["subscribed TX", "error", "not found"].contains { out.contains($0) }
            }
            let subscribed = Date()
            let send = try lab.run("send", lab.environment.msgpipe, ["send"] + Self.bluez + ["--adapter", "hci1", "--to", "msgpipe-held",
                "--connect-timeout", "90", "--verbose", "--json", try lab.file("kib256.bin", message).path], seconds: 300)
            let held = Date().timeIntervalSince(subscribed)
            bleak.wait(seconds: 60)
            Thread.sleep(forTimeInterval: 1)
            listen.stop()
            let bleakOut = bleak.stdoutText
            if bleakOut.contains("failed to discover services, device disconnected") && !bleakOut.contains("subscribed TX") {
                lab.skip("bluetoothd 5.66 dropped bleak's link during service discovery in all of its tries (EATT, not msgpipe)")
                return
            }
            lab.expect(bleakOut.split(separator: "\n").contains { $0.hasPrefix("held 12.0 s, connected True") },
                "bleak did not hold its link connected for 12 s")
            lab.expectExit(bleak)
            lab.expectExit(send)
            lab.expectExit(listen)
            // A lower bound: bleak holds its turn 12 s, and a slow machine only makes send wait longer.
            lab.expect(held >= 11, "send was done " + String(format: "%.1f", held) + " s after bleak subscribed: it did not wait for bleak's turn")
            lab.expectEachOnce([("the 256 KiB", message)], in: listen.jsonLines(ListenLine.self))
            lab.note("stock box: bleak connected 12 s writing nothing; msgpipe send from hci1 done " + String(format: "%.2f", held)
                + " s after bleak subscribed (transfer \(send.jsonLines(SendLine.self).first.map { "\($0.seconds)" } ?? "?") s)")
        }
    }
}
