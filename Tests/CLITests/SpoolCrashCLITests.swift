import Foundation
import Glibc
import MemoryLinks
import Testing

/// A batch queued with `msgpipe send --spool DIR --queue-only`, then delivered by `msgpipe send --spool DIR` runs
/// killed with SIGKILL and started again on the same DIR, to a `msgpipe listen --out-dir` that may be killed at the
/// same moments. Asserted: the last send exits 0, the spool is empty, and the output directory holds every
/// message exactly once and intact: none lost (taken out of the spool before it was acknowledged), none twice
/// (sent again in another session after a restart, or kept again by a restarted listen).
@Suite("send --spool killed with SIGKILL and restarted on its spool", .serialized)
struct SpoolCrashCLITests {
    @Test("60 messages of 1 B to 4 MiB, send --spool killed 20 times: every message in --out-dir exactly once")
    func senderKilled() async throws {
        let plan = ListenCrashPlan(messages: 60, fullSize: 2, kills: 20, seed: 20, seconds: 240)
        try await SpoolCrashRun(plan: plan, killsListener: false).run()
    }

    @Test("60 messages of 1 B to 4 MiB, send --spool and listen both killed 20 times: every message exactly once")
    func bothKilled() async throws {
        let plan = ListenCrashPlan(messages: 60, fullSize: 2, kills: 20, seed: 21, seconds: 240)
        try await SpoolCrashRun(plan: plan, killsListener: true).run()
    }

    @Test("with end-to-end keys, 40 messages, send --spool and listen both killed 12 times: every message exactly once")
    func bothKilledSealed() async throws {
        // Each run of send opens a new Transport session with a new handshake: only the origin sealed in each
        // message lets the restarted listen's journal know a resend.
        let plan = ListenCrashPlan(messages: 40, fullSize: 1, kills: 12, seed: 22, seconds: 240)
        try await SpoolCrashRun(plan: plan, killsListener: true, sealed: true).run()
    }
}

/// One run: queues the batch, delivers it with kills, checks the spool and the output directory.
struct SpoolCrashRun {
    let plan: ListenCrashPlan
    /// Kill the listener with the sender each time.
    let killsListener: Bool
    /// Both sides hold a pre-shared key (`--key-file`): every message goes sealed.
    var sealed = false

    struct Outcome: Sendable {
        var kills = 0
        var queued: MsgPipeProcess.Result?
        var sent: MsgPipeProcess.Result?
        var timedOut = false
        var failure: String?
        var diedOnTheirOwn: [String] = []
        var copies: [Int] = []
        var foreign: [String] = []
        var leftInSpool: [String] = []
    }

    func run() async throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let outcome = try await ListenCrashRun.onThreadOfItsOwn { try drive(in: scratch) }
        let kills = outcome.kills
        #expect(outcome.queued?.status == 0, "send --queue-only exited \(outcome.queued?.status ?? -1): \(outcome.queued?.stderr ?? "")")
        #expect(outcome.failure == nil, "\(outcome.failure ?? "")")
        #expect(!outcome.timedOut, "send still running after \(plan.seconds) s (\(kills) kills)")
        #expect(
            outcome.sent?.status == 0,
            "the last send exited \(outcome.sent?.status ?? -1) after \(kills) kills: \(outcome.sent?.stderr.suffix(2000) ?? "")")
        #expect(kills == plan.kills, "the spool was empty after only \(kills) of \(plan.kills) kills")
        #expect(outcome.diedOnTheirOwn.isEmpty, "a process exited before it was killed: \(outcome.diedOnTheirOwn)")
        #expect(outcome.leftInSpool.isEmpty, "still in the spool after exit 0: \(outcome.leftInSpool)")
        plan.expectEachExactlyOnce(copies: outcome.copies, foreign: outcome.foreign, kills: kills)
    }

    private func drive(in scratch: ListenSendCLITests.Scratch) throws -> Outcome {
        let out = scratch.directory.appendingPathComponent("out")
        let spool = scratch.directory.appendingPathComponent("spool")
        let files = try plan.sizes.indices.map { index in
            let url = scratch.directory.appendingPathComponent(String(format: "in%02d", index))
            try plan.body(index).write(to: url)
            return url.path
        }
        var outcome = Outcome()
        let watchdog = plan.seconds + 30
        outcome.queued = try RunningMsgPipe(["send", "--spool", spool.path, "--queue-only"] + files, watchdog: watchdog).finish()
        guard outcome.queued?.status == 0 else { return outcome }
        let deadline = Date(timeIntervalSinceNow: plan.seconds)
        var keys: [String] = []
        if sealed {
            let key = scratch.directory.appendingPathComponent("key").path
            let made = try MsgPipeProcess.run(["keygen", "--out", key])
            guard made.status == 0 else {
                outcome.failure = "keygen: \(made.stderr)"
                return outcome
            }
            keys = ["--key-file", key]
        }
        let listenArguments = ["listen"] + scratch.link + ["--out-dir", out.path] + keys
        let sendArguments = ["send", "--spool", spool.path] + scratch.link + ["--reconnects", "1000"] + keys
        var listener = try RunningMsgPipe(listenArguments, watchdog: watchdog)
        var sender: RunningMsgPipe?
        defer {
            for process in [listener, sender].compactMap(\.self) where process.process.isRunning {
                kill(process.process.processIdentifier, SIGKILL)
            }
        }
        guard listener.waitForError(containing: "listening on unix:") else {
            outcome.failure = "no ready line: \(listener.stderrSoFar)"
            return outcome
        }
        var send = try RunningMsgPipe(sendArguments, watchdog: watchdog)
        sender = send
        // Kill k comes once the output holds k / kills of 50 % of the batch's bytes, then, in turn: as soon as a
        // message file leaves the spool (acknowledged, its removal maybe not durable), as soon as a new hidden file
        // shows up in the output (a message being kept), as soon as a new message file shows up there (kept, its
        // acknowledgement maybe not sent), or after a random 0-250 ms. The first three wait 0.5 s at most: a run without kills takes a few seconds.
        var random = SplitMix64(seed: plan.seed ^ 0x5EED)
        while outcome.kills < plan.kills, send.process.isRunning, Date() < deadline {
            let milestone = Int(Double(plan.totalBytes) * 0.5 * Double(outcome.kills) / Double(plan.kills))
            while send.process.isRunning, Date() < deadline, ListenCrashRun.messageBytes(in: out) < milestone {
                Thread.sleep(forTimeInterval: 0.01)
            }
            let moment = min(Date(timeIntervalSinceNow: 0.5), deadline)
            switch outcome.kills % 4 {
            case 0:
                let before = ListenCrashRun.names(in: spool)
                while send.process.isRunning, Date() < moment, before.isSubset(of: ListenCrashRun.names(in: spool)) {
                    Thread.sleep(forTimeInterval: 0.001)
                }
            case 1, 2:
                let hidden = outcome.kills % 4 == 1
                var before = ListenCrashRun.names(in: out)
                while send.process.isRunning, Date() < moment {
                    Thread.sleep(forTimeInterval: 0.001)
                    let now = ListenCrashRun.names(in: out)
                    if now.subtracting(before).contains(where: { $0.hasPrefix(".") == hidden }) { break }
                    before = now
                }
            default:
                Thread.sleep(forTimeInterval: Double.random(in: 0 ... 0.25, using: &random))
            }
            guard send.process.isRunning, Date() < deadline else { break }
            kill(send.process.processIdentifier, SIGKILL)
            if killsListener {
                if listener.process.isRunning {
                    kill(listener.process.processIdentifier, SIGKILL)
                    _ = listener.finish()
                } else {
                    let ended = listener.finish()
                    outcome.diedOnTheirOwn.append("listen, status \(ended.status): \(ended.stderr.suffix(500))")
                }
            }
            let killed = send.finish()
            if killed.status != 9 && killed.status != 128 + 9 {
                outcome.diedOnTheirOwn.append("send, status \(killed.status): \(killed.stderr.suffix(500))")
            }
            outcome.kills += 1
            if killsListener {
                listener = try RunningMsgPipe(listenArguments, watchdog: watchdog)
                guard listener.waitForError(containing: "listening on unix:") else {
                    outcome.failure = "listen restart \(outcome.kills) has no ready line: \(listener.stderrSoFar)"
                    return outcome
                }
            }
            send = try RunningMsgPipe(sendArguments, watchdog: watchdog)
            sender = send
        }
        while send.process.isRunning, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        outcome.timedOut = send.process.isRunning
        if outcome.timedOut { kill(send.process.processIdentifier, SIGKILL) }
        outcome.sent = send.finish()
        listener.process.terminate()
        _ = listener.finish()
        (outcome.copies, outcome.foreign) = try ListenCrashRun(plan).census(of: out)
        outcome.leftInSpool = ListenCrashRun.names(in: spool).filter { $0.hasSuffix(".msg") }.sorted()
        return outcome
    }
}
