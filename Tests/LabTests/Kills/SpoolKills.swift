import Foundation
import Glibc
import Testing

/// Kills 3 and 4: `send --spool --queue-only` queues the batch, then `send --spool` runs are SIGKILLed
/// `Lab.Kills.kills` times and run again on the same spool, in turn (a) as `msgpipe-lab send --kill-after-bytes N`
/// (mid-message); (b) as `msgpipe send`, SIGKILLed the moment a new message file shows up in listen's directory
/// (kept there, its acknowledgement maybe not taken: the next run must send it again in the same session);
/// (c) as `msgpipe send`, SIGKILLed the moment a message leaves the spool (the next one under way). With
/// `listenKilled`, listen is SIGKILLed with each send and started again first; in round (b) it is then
/// `msgpipe-lab listen --kill-after-kept 1`, and send is SIGKILLed the moment listen died, so that
/// acknowledgement never comes.
struct SpoolKills {
    let lab: LabCheck
    /// listen's options but `--out-dir`; send's but `--spool`, `--json --verbose` and the fault.
    let listenArguments: [String]
    let sendArguments: [String]
    let listenKilled: Bool

    /// Kernel backend on both sides, listen advertising `name`, send with `--reconnects 50` and `linkMode`
    /// (`--link-mode MODE`, or none: auto).
    static func kernel(_ lab: LabCheck, name: String, linkMode: [String], listenKilled: Bool) -> SpoolKills {
        SpoolKills(lab: lab, listenArguments: Lab.Kills.kernel + ["--adapter", "hci0", "--name", name],
            sendArguments: Lab.Kills.kernel + ["--adapter", "hci1", "--to", name] + linkMode + ["--reconnects", "50"], listenKilled: listenKilled)
    }

    /// Runs the kills and judges them (exits, kills, the files, the spool left empty); a summary note for
    /// results.txt.
    func run(_ tag: String) throws {
        let scratch = try Lab.Kills.scratch(lab, tag)
        let batch = try KillsBatch(in: scratch.appendingPathComponent("in"))
        let out = scratch.appendingPathComponent("out")
        let spool = scratch.appendingPathComponent("spool")
        let log = KillsLog(lab)
        let kills = Lab.Kills.kills
        let env = lab.environment
        var k = 0
        var listenRun = 0

        let queue = try lab.run("queue", env.msgpipe, ["send", "--spool", spool.path, "--queue-only"] + batch.files.map(\.path), seconds: 60)
        log.add("queue \(queue.exit.map(String.init(describing:)) ?? "running")")
        lab.expectExit(queue)

        func startListen() throws -> LabProcess {
            let killsItself = listenKilled && k % 3 == 1 && k < kills
            let listen = try lab.start("listen\(listenRun)", killsItself ? env.msgpipeLab : env.msgpipe,
                ["listen"] + listenArguments + ["--out-dir", out.path] + (killsItself ? ["--kill-after-kept", "1"] : []))
            if !listen.waitForStderr(containing: "advertising") { log.add("listen \(listenRun) did not advertise within 60 s") }
            return listen
        }
        func startSend(_ run: Int, faults: [String] = []) throws -> LabProcess {
            try lab.start("send\(run)", faults.isEmpty ? env.msgpipe : env.msgpipeLab,
                ["send", "--spool", spool.path] + sendArguments + ["--json", "--verbose"] + faults)
        }

        var listen = try startListen()
        var sends: [LabProcess] = []
        var sigkills = 0
        var listenSigkills = 0
        var sendExit: LabExit?
        while true {
            if k >= kills {
                let send = try startSend(sends.count)
                sends.append(send)
                sendExit = send.wait(seconds: Lab.Kills.sendSeconds)
                log.add("send \(sends.count - 1) \(sendExit!) at \(log.elapsed) s")
                lab.expectExit(send)
                break
            }
            var why = ""
            let mode: String
            let send: LabProcess
            switch k % 3 {
            case 0:
                let bytes = Lab.Kills.killBytes[k / 3 % Lab.Kills.killBytes.count]
                send = try startSend(sends.count, faults: ["--kill-after-bytes", "\(bytes)"])
                if !Lab.Kills.until(Lab.Kills.killSeconds, { !send.isRunning }) {
                    why = " (still running after \(Int(Lab.Kills.killSeconds)) s)"
                    kill(send.pid, SIGKILL)
                }
                mode = "bytes \(bytes)"
            case 1:
                let before = Lab.Kills.messageFiles(out)
                send = try startSend(sends.count)
                if listenKilled {
                    // listen kills itself once it kept a message, unacknowledged; send dies then.
                    let current = listen
                    if !Lab.Kills.until(Lab.Kills.killSeconds, { !current.isRunning || !send.isRunning }) {
                        why = " (listen still running after \(Int(Lab.Kills.killSeconds)) s)"
                    }
                } else if !Lab.Kills.until(Lab.Kills.killSeconds, { Lab.Kills.messageFiles(out) > before || !send.isRunning }) {
                    why = " (no new file in the output within \(Int(Lab.Kills.killSeconds)) s)"
                }
                kill(send.pid, SIGKILL)
                mode = "kept"
            default:
                let before = Lab.Kills.messageFiles(spool)
                send = try startSend(sends.count)
                if !Lab.Kills.until(Lab.Kills.killSeconds, { Lab.Kills.messageFiles(spool) < before || !send.isRunning }) {
                    why = " (the spool did not shrink within \(Int(Lab.Kills.killSeconds)) s)"
                }
                kill(send.pid, SIGKILL)
                mode = "shrink"
            }
            sends.append(send)
            let exit = send.wait(seconds: 30)
            if listenKilled {
                let listenExit = listen.stop(signal: SIGKILL, seconds: 30)
                if listenExit == .signal(SIGKILL) { listenSigkills += 1 }
                log.add("listen \(listenRun) \(listenExit)")
            }
            log.add("kill \(k + 1) (\(mode)): send \(sends.count - 1) \(exit)\(why) at \(log.elapsed) s, \(Lab.Kills.messageFiles(spool)) left in the spool")
            guard exit == .signal(SIGKILL) else {
                log.add("send \(sends.count - 1) was not killed: stopping")
                break
            }
            sigkills += 1
            k += 1
            if listenKilled {
                listenRun += 1
                listen = try startListen()
            }
        }
        log.add("send done at \(log.elapsed) s")
        let listenExit = listen.stop(seconds: 30)
        log.add("last listen \(listenExit)")
        lab.expect(sendExit != nil, "the last send --spool never ran")
        lab.expectExit(listen)
        lab.expect(k == kills && sigkills == kills, "kills \(k) of \(kills), \(sigkills) of them SIGKILL")
        if listenKilled {
            lab.expect(listenSigkills == kills, "listen killed by SIGKILL \(listenSigkills) times, expected \(kills)")
        }
        let census = lab.expectKeptOnce(batch, in: out, log: log)
        let left = Lab.Kills.messageFiles(spool)
        lab.expect(left == 0, "left in spool \(left)")
        // A send killed after a message left the spool and before it printed that line never prints its id:
        // the count is read, not judged.
        let (lines, _) = KillsSendLine.lines(of: sends)
        let ids = Set(lines.compactMap(\.spoolID)).count
        log.add("left in spool \(left), spool ids printed \(ids) of \(batch.messages.count)")
        lab.note("\(tag): \(batch.messages.count) messages, \(batch.bytes) bytes; kills \(k) of \(kills), \(sigkills) of them SIGKILL"
            + (listenKilled ? ", listen kills \(listenSigkills)" : "") + ", lost \(census.lost), duplicated \(census.duplicated), left in spool \(left), "
            + "send \(sendExit.map(String.init(describing:)) ?? "never ran") in \(log.seconds) s; spool ids printed \(ids) of \(batch.messages.count)")
    }
}
