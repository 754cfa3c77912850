import Foundation
import Glibc
import Testing

extension Tag {
    /// The kills over Bluetooth (Tests/LabTests/Kills).
    @Tag static var kills: Self
}

extension Lab {
    /// "Acknowledged means kept, exactly once" over the real Linux Bluetooth stack: one central streams a batch
    /// into `listen --out-dir` while listen, or `send --spool`, is SIGKILLed mid-transfer and started again on the
    /// same directory, as Tests/CLITests' ListenCrash and SpoolCrash tests do over UNIX sockets. hci0 runs listen
    /// (the peripheral), hci1 send (the central). Where a kill lands is never a guessed sleep: msgpipe-lab kills
    /// itself after N bytes (`--kill-after-bytes`) or once it kept a message (`--kill-after-kept 1`), or the test
    /// kills the process the moment a file shows up in, or leaves, a directory (20 ms polls).
    @Suite(.tags(.kills, .hci0, .hci1)) struct Kills {
        /// Kills per test: `LAB_KILLS_N`, else 3 in the full run (one of each trigger) and 5 alone
        /// (`LAB_ONLY=kills`, `Scripts/lab.sh --check`).
        static let kills: Int = {
            let env = ProcessInfo.processInfo.environment
            if let n = env["LAB_KILLS_N"].flatMap({ Int($0) }), n > 0 { return n }
            return (env["LAB_ONLY"] ?? "").isEmpty ? 3 : 5
        }()
        /// The batch: 32 messages, 1 B and 7 B, two of 256 KiB, the others log-uniform from 1 B to 256 KiB.
        static let messageCount = 32
        /// The limits of `--kill-after-bytes`, the i-th such kill's (cycling).
        static let killBytes = [70_000, 110_000, 50_000, 90_000]
        /// A whole send's guard (the slowest seen: 113 s, beside bluetoothd at load average 11).
        static let sendSeconds = 300.0
        /// One kill's guard (the longest seen between kills: 23 s): a process that never gets there.
        static let killSeconds = 120.0
        static let kernel = ["--backend", "kernel"]

        /// Polls `condition` every `interval` seconds until it holds (true) or `seconds` passed (false); `tick`
        /// runs before each poll (kills 5 starts a bluetoothd that died by itself again there).
        static func until(_ seconds: Double, interval: Double = 0.02, tick: () -> Void = {}, _ condition: () -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while true {
                tick()
                if condition() { return true }
                if Date() >= deadline { return false }
                Thread.sleep(forTimeInterval: interval)
            }
        }

        /// The number of message files (`*.msg`, hidden names apart: `.part` files, the journal) in `directory`.
        static func messageFiles(_ directory: URL) -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter { $0.hasSuffix(".msg") && !$0.hasPrefix(".") }.count
        }

        /// A fresh scratch directory for `test` on the guest's own /tmp (tmpfs: the inputs, spools and outputs),
        /// with hci0 and hci1 powered (a bluetoothd that exited powered them off).
        static func scratch(_ lab: LabCheck, _ test: String) throws -> URL {
            for index in 0...1 { labShell(["btmgmt", "--index", "\(index)", "power", "on"]) }
            let directory = URL(fileURLWithPath: "/tmp/kills/\(test)")
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }
    }
}

/// The messages a kills test sends, each a file `inNN` of its own, no two alike.
struct KillsBatch {
    let messages: [[UInt8]]
    let files: [URL]
    var bytes: Int { messages.reduce(0) { $0 + $1.count } }

    /// Writes `count` messages into `directory`: 1 B, 7 B, then two of 256 KiB among the others, whose sizes are
    /// log-uniform from 1 B to 256 KiB (from `seed`, so each run has the same sizes: 970,767 bytes with the
    /// default, about the bash section's batch); random contents.
    init(in directory: URL, count: Int = Lab.Kills.messageCount, seed: UInt64 = 32) throws {
        var generator = SplitMix64(seed: seed)
        let largest = 256 * 1024
        var others = (0..<(count - 4)).map { _ in
            Int(exp(Double(generator.next() >> 11) / Double(1 << 53) * log(Double(largest))).rounded())
        } + [largest, largest]
        others.shuffle(using: &generator)
        var seen = Set<[UInt8]>()
        var messages: [[UInt8]] = []
        for size in [1, 7] + others {
            var bytes = LabCheck.randomBytes(size)
            while seen.contains(bytes) { bytes = LabCheck.randomBytes(size) }
            seen.insert(bytes)
            messages.append(bytes)
        }
        try self.init(messages: messages, in: directory)
    }

    /// `messages` as given (no two alike, for `census`), each written to a file `inNN` of `directory` (NN from
    /// 00, in order), or to no file when `directory` is nil (a batch only to judge a directory by).
    init(messages: [[UInt8]], in directory: URL?) throws {
        self.messages = messages
        guard let directory else {
            files = []
            return
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        files = try messages.enumerated().map { index, bytes in
            let url = directory.appendingPathComponent(String(format: "in%02d", index))
            try Data(bytes).write(to: url)
            return url
        }
    }

    /// Which messages `directory` holds and how often, by their bytes (names starting with "." are listen's own:
    /// its journal, lock and `.part` files): the messages found in no file, those found in more than one, and the
    /// files that are none of them.
    func census(of directory: URL) -> (lost: [Int], duplicated: [(index: Int, copies: Int)], foreign: [String]) {
        var indexes: [[UInt8]: Int] = [:]
        for (index, message) in messages.enumerated() { indexes[message] = index }
        var copies = [Int](repeating: 0, count: messages.count)
        var foreign: [String] = []
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        for name in names {
            let bytes = (try? [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))) ?? []
            if let index = indexes[bytes] { copies[index] += 1 } else { foreign.append("\(name) (\(bytes.count) B, crc32 \(crc32Hex(bytes)))") }
        }
        return (copies.indices.filter { copies[$0] == 0 },
            copies.indices.filter { copies[$0] > 1 }.map { ($0, copies[$0]) }, foreign)
    }
}

/// A seeded generator (SplitMix64): the batch's sizes are the same in every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One `send --json` line as the kills judge it: a line of a run killed mid-write may not decode.
struct KillsSendLine: Decodable {
    let index: Int?
    let link: String?
    let spoolID: Int?

    enum CodingKeys: String, CodingKey {
        case index, link
        case spoolID = "spool_id"
    }

    /// The lines of every process in `sends`, and how many lines did not decode (cut short by a kill).
    static func lines(of sends: [LabProcess]) -> (lines: [KillsSendLine], unreadable: Int) {
        var lines: [KillsSendLine] = []
        var unreadable = 0
        for send in sends {
            for text in String(decoding: send.stdout, as: UTF8.self).split(separator: "\n") where !text.allSatisfy(\.isWhitespace) {
                if let line = try? JSONDecoder().decode(KillsSendLine.self, from: Data(text.utf8)) { lines.append(line) } else { unreadable += 1 }
            }
        }
        return (lines, unreadable)
    }
}

/// What a kills test did, a line per kill and exit, for `kills.log` in its log directory and its failure report.
final class KillsLog {
    private let url: URL
    private let started = Date()
    private(set) var lines: [String] = []

    init(_ lab: LabCheck) { url = lab.directory.appendingPathComponent("kills.log") }

    /// Seconds since the test's kills began, one decimal.
    var elapsed: String { String(format: "%.1f", Date().timeIntervalSince(started)) }
    var seconds: Int { Int(Date().timeIntervalSince(started).rounded()) }

    func add(_ line: String) {
        lines.append(line)
        try? (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    }
}

extension LabCheck {
    /// The data verdicts every kills test shares: each message in `out` exactly once and byte-identical, nothing
    /// else there; the census goes into `log`.
    func expectKeptOnce(_ batch: KillsBatch, in out: URL, log: KillsLog) -> (lost: Int, duplicated: Int) {
        let census = batch.census(of: out)
        log.add("lost \(census.lost.count), duplicated \(census.duplicated.count), foreign \(census.foreign.count)")
        expect(census.lost.isEmpty, "lost \(census.lost.count) of \(batch.messages.count): in\(census.lost.map { String(format: "%02d", $0) }.joined(separator: ", in"))")
        expect(census.duplicated.isEmpty, "duplicated \(census.duplicated.count): \(census.duplicated.map { String(format: "in%02d x%d", $0.index, $0.copies) })")
        expect(census.foreign.isEmpty, "foreign files in \(out.path): \(census.foreign)")
        return (census.lost.count, census.duplicated.count)
    }
}
