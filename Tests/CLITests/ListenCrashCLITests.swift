import Foundation
import Glibc
import MemoryLinks
import Testing

/// One `msgpipe send --reconnects 1000 FILE...` delivers a batch of messages while its `msgpipe listen --out-dir DIR`
/// is killed with SIGKILL and started again on the same DIR, over and over; the last listener runs until send exits.
/// Asserted: send exits 0, and DIR then holds every message exactly once and intact: none lost (acknowledged before it
/// was on disk), none twice (resent after a crash and written again), no partial or foreign file. Names starting with
/// '.' (temporary files, listen's own bookkeeping) are not messages.
@Suite("listen killed with SIGKILL and restarted on its --out-dir during one send", .serialized)
struct ListenCrashCLITests {
    @Test("80 messages of 1 B to 4 MiB (~60 MB), listen killed 40 times: every message in --out-dir exactly once")
    func fortyKills() async throws {
        try await ListenCrashRun(ListenCrashPlan(messages: 80, fullSize: 8, kills: 40, seed: 40, seconds: 300)).run()
    }

    @Test("80 messages of 1 B to 4 MiB (~32 MB), listen killed 10 times: every message in --out-dir exactly once")
    func tenKills() async throws {
        try await ListenCrashRun(ListenCrashPlan(messages: 80, fullSize: 3, kills: 10, seed: 10, seconds: 150)).run()
    }
}

/// A batch and how often its listener is killed; everything in it follows from `seed`, except the timing.
struct ListenCrashPlan {
    static let largest = 4 << 20

    /// The message sizes, in sending order: message 0 is 1 B and message 1 is 7 B (shorter than the index every
    /// longer message starts with), `fullSize` messages are 4 MiB, the others log-uniform from 1 B to 4 MiB.
    let sizes: [Int]
    let kills: Int
    let seed: UInt64
    /// The whole run's limit: past it every process is killed and the test fails.
    let seconds: Double

    init(messages: Int, fullSize: Int, kills: Int, seed: UInt64, seconds: Double) {
        var random = SplitMix64(seed: seed)
        var others = (2 ..< messages - fullSize).map { _ in
            Int(exp(Double.random(in: 0 ... log(Double(Self.largest)), using: &random)).rounded())
        }
        others += Array(repeating: Self.largest, count: fullSize)
        others.shuffle(using: &random)
        sizes = [1, 7] + others
        self.kills = kills
        self.seed = seed
        self.seconds = seconds
    }

    var totalBytes: Int { sizes.reduce(0, +) }

    /// Message `index`: its index as 8 little-endian bytes, then pseudo-random bytes from `seed` and `index`, cut to
    /// its size (a message shorter than 8 bytes is the first bytes of its index: no two are alike).
    func body(_ index: Int) -> Data {
        var words = [UInt64](repeating: 0, count: max(1, (sizes[index] + 7) / 8))
        var random = SplitMix64(seed: seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        words.withUnsafeMutableBufferPointer { words in
            words[0] = UInt64(index).littleEndian
            for word in 1 ..< words.count { words[word] = random.next().littleEndian }
        }
        return words.withUnsafeBytes { Data($0.prefix(sizes[index])) }
    }

    /// The message `data` is, if it is one of the batch whole.
    func index(of data: Data) -> Int? {
        let candidates: [Int]
        if data.count >= 8 {
            let index = data.prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            candidates = index < UInt64(sizes.count) ? [Int(index)] : []
        } else {
            candidates = sizes.indices.filter { sizes[$0] == data.count }
        }
        return candidates.first { sizes[$0] == data.count && body($0) == data }
    }

    /// The verdict on an output directory's census: every message of the batch in exactly one file, and no other file.
    func expectEachExactlyOnce(
        copies: [Int], foreign: [String], kills: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let lost = copies.indices.filter { copies[$0] == 0 }
        let duplicated = copies.indices.filter { copies[$0] > 1 }
        let summary = "\(sizes.count) messages, \(kills) kills: \(lost.count) lost, \(duplicated.count) duplicated, "
            + "\(foreign.count) partial or foreign files"
        #expect(lost.isEmpty, "\(summary); lost: \(lost.map { "#\($0) (\(sizes[$0]) B)" })", sourceLocation: sourceLocation)
        #expect(
            duplicated.isEmpty, "\(summary); duplicated: \(duplicated.map { "#\($0) ×\(copies[$0])" })",
            sourceLocation: sourceLocation)
        #expect(foreign.isEmpty, "\(summary); no message of the batch: \(foreign)", sourceLocation: sourceLocation)
    }
}

/// One run of a ``ListenCrashPlan``: writes the files, starts listen and send, kills and restarts listen, then
/// checks what send and the directory say.
struct ListenCrashRun {
    let plan: ListenCrashPlan

    init(_ plan: ListenCrashPlan) { self.plan = plan }

    /// What a run saw: the kills done, send's end, and DIR's files.
    struct Outcome: Sendable {
        var kills = 0
        var sent: MsgPipeProcess.Result?
        /// Send was still running at the deadline (and was killed).
        var timedOut = false
        /// Why the run stopped early (a listener without a ready line), if it did.
        var failure: String?
        /// Listeners that had exited before their kill: status and the end of their standard error.
        var diedOnTheirOwn: [String] = []
        /// How many files of DIR hold each message, and the files that hold none (name and size).
        var copies: [Int] = []
        var foreign: [String] = []
    }

    func run() async throws {
        let scratch = try ListenSendCLITests.Scratch()
        defer { scratch.remove() }
        let outcome = try await Self.onThreadOfItsOwn { try drive(in: scratch) }
        let kills = outcome.kills
        #expect(outcome.failure == nil, "\(outcome.failure ?? "")")
        #expect(!outcome.timedOut, "send still running after \(plan.seconds) s (\(kills) kills)")
        #expect(
            outcome.sent?.status == 0,
            "send exited \(outcome.sent?.status ?? -1) after \(kills) kills: \(outcome.sent?.stderr.suffix(2000) ?? "")")
        // Fewer kills: send was done before DIR held 80 % of the bytes, so it was acknowledged for messages DIR lacks.
        #expect(kills == plan.kills, "send ended after only \(kills) of \(plan.kills) kills")
        #expect(outcome.diedOnTheirOwn.isEmpty, "listen exited before it was killed: \(outcome.diedOnTheirOwn)")

        plan.expectEachExactlyOnce(copies: outcome.copies, foreign: outcome.foreign, kills: kills)
    }

    /// Writes the files, runs send against a listener killed and restarted `plan.kills` times, and counts DIR's
    /// messages. Blocking, with no #expect: it runs on a thread of its own.
    private func drive(in scratch: ListenSendCLITests.Scratch) throws -> Outcome {
        let out = scratch.directory.appendingPathComponent("out")
        let files = try plan.sizes.indices.map { index in
            let url = scratch.directory.appendingPathComponent(String(format: "in%02d", index))
            try plan.body(index).write(to: url)
            return url.path
        }
        var outcome = Outcome()
        let deadline = Date(timeIntervalSinceNow: plan.seconds)
        let watchdog = plan.seconds + 30
        let listenArguments = ["listen"] + scratch.link + ["--out-dir", out.path]
        var listener = try RunningMsgPipe(listenArguments, watchdog: watchdog)
        var sender: RunningMsgPipe?
        // Whatever happens below, no msgpipe outlives the test.
        defer {
            for process in [listener, sender].compactMap(\.self) where process.process.isRunning {
                kill(process.process.processIdentifier, SIGKILL)
            }
        }
        guard listener.waitForError(containing: "listening on unix:") else {
            outcome.failure = "no ready line: \(listener.stderrSoFar)"
            return outcome
        }
        let send = try RunningMsgPipe(["send"] + scratch.link + ["--reconnects", "1000"] + files, watchdog: watchdog)
        sender = send

        // Kill k comes once DIR holds k / kills of 80 % of the batch's bytes (so the kills spread over the whole
        // transfer and the last one comes before its end), then, in turn: as soon as a new hidden file shows up (a
        // message being written, maybe acknowledged already), as soon as a new message file shows up (written, its
        // acknowledgement maybe not yet sent), or after a random 0-250 ms (anywhere in a message or a reconnect).
        // The first two wait 2 s at most.
        var random = SplitMix64(seed: plan.seed ^ 0x5EED)
        while outcome.kills < plan.kills, send.process.isRunning, Date() < deadline {
            let milestone = Int(Double(plan.totalBytes) * 0.8 * Double(outcome.kills) / Double(plan.kills))
            while send.process.isRunning, Date() < deadline, Self.messageBytes(in: out) < milestone {
                Thread.sleep(forTimeInterval: 0.01)
            }
            switch outcome.kills % 3 {
            case 0, 1:
                let hidden = outcome.kills % 3 == 0
                let moment = min(Date(timeIntervalSinceNow: 2), deadline)
                var before = Self.names(in: out)
                while send.process.isRunning, Date() < moment {
                    Thread.sleep(forTimeInterval: 0.001)
                    let now = Self.names(in: out)
                    if now.subtracting(before).contains(where: { $0.hasPrefix(".") == hidden }) { break }
                    before = now
                }
            default:
                Thread.sleep(forTimeInterval: Double.random(in: 0 ... 0.25, using: &random))
            }
            guard send.process.isRunning, Date() < deadline else { break }
            if listener.process.isRunning {
                kill(listener.process.processIdentifier, SIGKILL)
                _ = listener.finish()
            } else {
                let ended = listener.finish()
                outcome.diedOnTheirOwn.append("status \(ended.status): \(ended.stderr.suffix(500))")
            }
            outcome.kills += 1
            listener = try RunningMsgPipe(listenArguments, watchdog: watchdog)
            guard listener.waitForError(containing: "listening on unix:") else {
                outcome.failure = "restart \(outcome.kills) has no ready line: \(listener.stderrSoFar)"
                return outcome
            }
        }
        while send.process.isRunning, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        outcome.timedOut = send.process.isRunning
        if outcome.timedOut { kill(send.process.processIdentifier, SIGKILL) }
        outcome.sent = send.finish()
        listener.process.terminate()
        _ = listener.finish()
        (outcome.copies, outcome.foreign) = try census(of: out)
        return outcome
    }

    /// How many files of DIR hold each message, and the files that hold none (name and size).
    func census(of directory: URL) throws -> (copies: [Int], foreign: [String]) {
        var copies = [Int](repeating: 0, count: plan.sizes.count)
        var foreign: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.hasPrefix(".") {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            if let index = plan.index(of: data) { copies[index] += 1 } else { foreign.append("\(name) (\(data.count) B)") }
        }
        return (copies, foreign.sorted())
    }

    /// Runs `work` on a thread of its own, off Swift's pool: on a 2-core machine the other CLI tests' blocking waits
    /// can hold every thread of the pool for minutes, and the kills must come on time.
    static func onThreadOfItsOwn<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// The names in DIR, hidden ones included; none before the directory exists.
    static func names(in directory: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    /// The bytes of DIR's messages so far (hidden files apart); 0 before the directory exists.
    static func messageBytes(in directory: URL) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return 0 }
        return names.filter { !$0.hasPrefix(".") }.reduce(0) { total, name in
            var status = stat()
            return total + (stat(directory.appendingPathComponent(name).path, &status) == 0 ? Int(status.st_size) : 0)
        }
    }
}
