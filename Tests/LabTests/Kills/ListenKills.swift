import Foundation
import Glibc
import Testing

/// Kills 1, 2 and 5: one send delivers the batch while listen is SIGKILLed `Lab.Kills.kills` times and started
/// again on the same `--out-dir`; the last listen runs until send is done. Listen dies in turn
/// (a) as `msgpipe-lab listen --kill-after-bytes N`, mid-message; (b) as `msgpipe-lab listen --kill-after-kept 1`,
/// once it kept a message and before the acknowledgement goes out (the sender sends it again: the journal must
/// know it); (c) as `msgpipe listen`, SIGKILLed the moment a new message file shows up (its acknowledgement
/// maybe not sent yet).
struct ListenKills {
    enum Mode: String { case bytes, kept, file, last }

    let lab: LabCheck
    /// listen's options but `--out-dir`; send's but `--json --verbose` and the files.
    let listenArguments: [String]
    let sendArguments: [String]
    /// The link every send line must name.
    let link: String
    /// Kills 5's bluetoothd, started again when it dies by itself.
    var bluetoothd: KillsBluetoothd? = nil

    /// Kernel backend on both sides, listen advertising `name`, send with `--link-mode link --reconnects 50`.
    static func kernel(_ lab: LabCheck, name: String, link: String) -> ListenKills {
        ListenKills(lab: lab, listenArguments: Lab.Kills.kernel + ["--adapter", "hci0", "--name", name],
            sendArguments: Lab.Kills.kernel + ["--adapter", "hci1", "--to", name, "--link-mode", link, "--reconnects", "50"], link: link)
    }

    /// Runs the kills and judges them (exits, kills, the files, send's JSON); a summary note for results.txt.
    func run(_ tag: String) throws {
        let scratch = try Lab.Kills.scratch(lab, tag)
        let batch = try KillsBatch(in: scratch.appendingPathComponent("in"))
        let out = scratch.appendingPathComponent("out")
        let log = KillsLog(lab)
        let kills = Lab.Kills.kills
        let tick = { bluetoothd?.restartIfDied(log) ?? () }
        var run = 0
        var bytesUsed = 0
        var bluetoothdExitsSeen = 0
        var mode = Mode.bytes

        func startListen(_ next: Mode) throws -> LabProcess {
            mode = next
            var executable = lab.environment.msgpipe
            var faults: [String] = []
            switch next {
            case .bytes:
                executable = lab.environment.msgpipeLab
                faults = ["--kill-after-bytes", "\(Lab.Kills.killBytes[bytesUsed % Lab.Kills.killBytes.count])"]
                bytesUsed += 1
            case .kept:
                executable = lab.environment.msgpipeLab
                faults = ["--kill-after-kept", "1"]
            case .file, .last: break
            }
            let listen = try lab.start("listen\(run)", executable, ["listen"] + listenArguments + ["--out-dir", out.path] + faults)
            // One that dies first (bluetoothd gone while it registers) is judged by the loop, not here.
            if !Lab.Kills.until(60, interval: 0.1, tick: tick, { listen.stderr.contains("advertising") || !listen.isRunning }) {
                log.add("listen \(run) did not advertise within 60 s")
            }
            return listen
        }
        /// kl_btd_restarted: bluetoothd died by itself since the last call and is back with hci0 and hci1 powered.
        /// Such a death takes the listen beside it down with exit 1; that round is run again.
        func bluetoothdRestarted() -> Bool {
            guard let bluetoothd else { return false }
            // listen may see bluetoothd's name leave the bus a moment before its process ends.
            guard Lab.Kills.until(2, tick: tick, { bluetoothd.exits > bluetoothdExitsSeen }) else { return false }
            bluetoothdExitsSeen = bluetoothd.exits
            return bluetoothd.powered
        }

        var listen = try startListen(.bytes)
        let send = try lab.start("send", lab.environment.msgpipe, ["send"] + sendArguments + ["--json", "--verbose"] + batch.files.map(\.path))
        let done = { !listen.isRunning || !send.isRunning }
        let modes: [Mode] = [.bytes, .kept, .file]
        var k = 0
        var sigkills = 0
        var retries = 0
        while k < kills {
            var why = ""
            if mode == .file {
                let before = Lab.Kills.messageFiles(out)
                if !Lab.Kills.until(Lab.Kills.killSeconds, tick: tick, { Lab.Kills.messageFiles(out) > before || done() }) {
                    why = " (no new file within \(Int(Lab.Kills.killSeconds)) s)"
                }
                kill(listen.pid, SIGKILL)
            } else if !Lab.Kills.until(Lab.Kills.killSeconds, tick: tick, done) {
                why = " (still running after \(Int(Lab.Kills.killSeconds)) s)"
                kill(listen.pid, SIGKILL)
            }
            let exit = listen.wait(seconds: 30)
            if exit != .signal(SIGKILL) && bluetoothdRestarted() && send.isRunning && retries < 3 {
                retries += 1
                run += 1
                log.add("listen \(run - 1) \(exit): bluetoothd died under it, round \(k + 1) again")
                listen = try startListen(mode)
                continue
            }
            if exit == .signal(SIGKILL) { sigkills += 1 }
            log.add("kill \(k + 1) (\(mode.rawValue)): listen \(run) \(exit)\(why) at \(log.elapsed) s, \(Lab.Kills.messageFiles(out)) files")
            guard send.isRunning else {
                log.add("send ended before kill \(k + 1)")
                break
            }
            k += 1
            run += 1
            listen = try startListen(k < kills ? modes[k % modes.count] : .last)
        }
        // The last listen runs to the end; one that bluetoothd's death took down is started again (3 times at most).
        while Lab.Kills.until(Lab.Kills.sendSeconds, tick: tick, done) && send.isRunning && retries < 3 && bluetoothdRestarted() {
            let exit = listen.wait(seconds: 30)
            retries += 1
            run += 1
            log.add("listen \(run - 1) \(exit): bluetoothd died under it, started again")
            listen = try startListen(.last)
        }
        let sendExit = send.wait(seconds: Lab.Kills.sendSeconds)
        log.add("send \(sendExit) at \(log.elapsed) s")
        let listenExit = listen.stop(seconds: 30)
        log.add("last listen \(listenExit)")
        lab.expectExit(send)
        lab.expectExit(listen)
        lab.expect(k == kills && sigkills == kills, "kills \(k) of \(kills), \(sigkills) of them SIGKILL")
        let census = lab.expectKeptOnce(batch, in: out, log: log)

        // send's JSON: every message acknowledged once, each line over the link the test forces.
        let (lines, unreadable) = KillsSendLine.lines(of: [send])
        let indexes = lines.compactMap(\.index)
        let once = Set(indexes).filter { index in (1...batch.messages.count).contains(index) && indexes.count(where: { $0 == index }) == 1 }
        lab.expect(once.count == batch.messages.count && lines.count == batch.messages.count,
            "send --json acknowledged \(once.count) of \(batch.messages.count) once, in \(lines.count) lines (\(unreadable) unreadable)")
        let overLink = lines.count(where: { $0.link == link })
        lab.expect(overLink == lines.count, "link \(link) on \(overLink) of \(lines.count) send lines")
        log.add("acknowledged \(once.count) of \(batch.messages.count), link \(link) on \(overLink) of \(lines.count) lines")
        let restarts = bluetoothd.map { $0.exits > 0 ? "; bluetoothd died by itself \($0.exits) time(s) and was started again" : "" } ?? ""
        lab.note("\(tag): \(batch.messages.count) messages, \(batch.bytes) bytes; kills \(k) of \(kills), \(sigkills) of them SIGKILL, "
            + "lost \(census.lost), duplicated \(census.duplicated), send \(sendExit) in \(log.seconds) s\(restarts)")
    }
}
