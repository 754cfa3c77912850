import Foundation
import Glibc
import Testing

/// One lab test's fixture. `LabCheck.run { lab in ... }` gives the test a log directory
/// (`OUT/labtests/FUNCTION/`), starts its programs there, and records its verdicts; afterwards it checks that
/// the test left nothing behind: no program of its own or any msgpipe running, no LE link on any controller, no
/// advertising instance. A failed test prints its own logs (each program's command line, exit and output tails)
/// and what btmon saw meanwhile, and the guest kernel's oopses meanwhile (also in `kernel-oops.txt`, which
/// lab-test.sh reads as "run it once more"). Each run appends one verdict line to `LAB_RESULTS` for lab-test.sh
/// ("0|1|skip SECONDS LOGDIR FILTER NAME": FILTER a `--filter` that selects this test alone).
final class LabCheck {
    let environment: LabEnvironment
    let name: String
    let directory: URL
    /// A regular expression for `--filter` that matches this test's id and no other.
    let filter: String
    private var processes: [LabProcess] = []
    private var failures: [String] = []
    private var notes: [String] = []
    private var skipped: String?
    private let started = Date()
    private let btmonStart: Int
    private let kernelLog = LabKernelLog()

    /// The controllers the lab may have (a missing one answers nothing and holds nothing).
    static let indexes = 0...3

    private init(environment: LabEnvironment, test: Test?) throws {
        self.environment = environment
        name = test?.displayName ?? test?.name ?? "lab test"
        filter = Self.exactFilter(test.map { String(describing: $0.id) } ?? "lab test")
        let slug = (test?.name ?? "test").filter { $0.isLetter || $0.isNumber }
        directory = environment.outDirectory.appendingPathComponent("labtests/\(slug)")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        btmonStart = LabCheck.btmonSize(environment)
    }

    /// Runs `body` as a lab test with a fresh fixture: no link, no advertising at the start (what an earlier test
    /// left is ended first, and not counted against this one).
    static func run(sourceLocation: SourceLocation = #_sourceLocation, _ body: (LabCheck) throws -> Void) {
        guard let check = begin(sourceLocation: sourceLocation) else { return }
        do { try body(check) } catch { check.fail("threw: \(error)", sourceLocation: sourceLocation) }
        check.finish(sourceLocation: sourceLocation)
    }

    /// `run` for a test that drives the library in-process (`async` calls), with the same fixture.
    static func runAsync(sourceLocation: SourceLocation = #_sourceLocation, _ body: (LabCheck) async throws -> Void) async {
        guard let check = begin(sourceLocation: sourceLocation) else { return }
        do { try await body(check) } catch { check.fail("threw: \(error)", sourceLocation: sourceLocation) }
        check.finish(sourceLocation: sourceLocation)
    }

    /// The fixture's start: a log directory, no link and no advertising; nil (an issue recorded) outside the lab.
    private static func begin(sourceLocation: SourceLocation) -> LabCheck? {
        guard let environment = LabEnvironment.current else {
            Issue.record("not inside the lab VM", sourceLocation: sourceLocation)
            return nil
        }
        let check: LabCheck
        do { check = try LabCheck(environment: environment, test: Test.current) } catch {
            Issue.record("cannot make the log directory: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        _ = check.waitForNoLinks(seconds: 20, endingThem: true)
        LabControllers.removeAdvertising()
        return check
    }

    // MARK: Verdicts

    /// Records a failure unless `condition` holds; `what` says what was expected and what was found.
    func expect(_ condition: Bool, _ what: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        if !condition { fail(what(), sourceLocation: sourceLocation) }
    }

    /// Records a failure.
    func fail(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        failures.append(what)
        Issue.record(Comment(rawValue: what), sourceLocation: sourceLocation)
    }

    /// Reports the test as a skip (lab-test.sh's `skip` line with `why`) unless it also failed: for a check that
    /// finds, while it runs, that this lab cannot show what it checks (an emulator's known bug, with evidence).
    func skip(_ why: String) {
        skipped = why
        print("lab skip: \(why)")
    }

    /// A number for people to read (goodput, times): printed and written beside the verdict, never judged.
    func note(_ text: String) {
        notes.append(text)
        print("lab note: \(text)")
    }

    // MARK: Programs and files

    /// Starts a program (standard input from `input`, from `LabProcess.type(_:)` when `interactive`, else
    /// /dev/null); its output goes to `LABEL.out` and `LABEL.err` in the test's log directory, or in `logs` (a
    /// record that outlives the test's directory, e.g. for a later boot of the VM to read).
    func start(_ label: String, _ executable: String, _ arguments: [String], input: URL? = nil, interactive: Bool = false,
        logs: URL? = nil) throws -> LabProcess {
        let process = try LabProcess(label: label, executable: executable, arguments: arguments, directory: logs ?? directory, input: input,
            interactive: interactive)
        processes.append(process)
        return process
    }

    /// Runs a program to its end, at most `seconds` (then it is killed and its exit says so).
    func run(_ label: String, _ executable: String, _ arguments: [String], input: URL? = nil, logs: URL? = nil, seconds: Double) throws
        -> LabProcess {
        let process = try start(label, executable, arguments, input: input, logs: logs)
        process.wait(seconds: seconds)
        return process
    }

    /// Writes `bytes` to NAME in the test's log directory.
    func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// `count` random bytes (from the system's generator, 8 at a time).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < count {
                var word = generator.next()
                let piece = min(8, count - offset)
                withUnsafeBytes(of: &word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: piece) }
                offset += piece
            }
        }
        return bytes
    }

    // MARK: Links, advertising, btmon

    /// Waits until no controller has an LE link (an idle link lingers about 2 s after its last socket). With
    /// `endingThem`, links still up after `seconds` are disconnected (then the controller power-cycled).
    func waitForNoLinks(seconds: Double, endingThem: Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        repeat {
            if LabControllers.leLinks().isEmpty { return true }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        guard endingThem else { return false }
        for link in LabControllers.leLinks() {
            labShell(["hcitool", "-i", "hci\(link.index)", "ledc", "\(link.handle)"])
        }
        Thread.sleep(forTimeInterval: 2)
        for index in Set(LabControllers.leLinks().map(\.index)) {
            labShell(["btmgmt", "--index", "\(index)", "power", "off"])
            labShell(["btmgmt", "--index", "\(index)", "power", "on"])
        }
        return false
    }

    private static func btmonSize(_ environment: LabEnvironment) -> Int {
        let path = environment.outDirectory.appendingPathComponent("btmon.txt").path
        return ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// What btmon wrote since the test started, once it wrote every frame of the air up to this call: btmon
    /// writes its file in 4 KiB blocks, so an LE Encrypt with a marker of this call as plaintext goes to hci0 (the
    /// controller only computes) every 0.2 s until btmon wrote it, at most 30 s.
    func btmonSinceStart() -> String {
        let url = environment.outDirectory.appendingPathComponent("btmon.txt")
        let marker = (0..<4).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }
        let arguments = ["hcitool", "-i", "hci0", "cmd", "0x08", "0x0017"] + Array(repeating: "00", count: 16)
            + ["4c", "61", "62", "43", "68", "65", "63", "6b", "00", "00", "00", "00"] + marker
        let plaintext = "Plaintext data: 4c6162436865636b00000000" + marker.joined()
        var text = ""
        for _ in 0..<150 {
            labShell(arguments)
            text = Self.read(url, from: btmonStart)
            if text.contains(plaintext) { return text }
            Thread.sleep(forTimeInterval: 0.2)
        }
        fail("btmon wrote none of its sync markers in 30 s")
        return text
    }

    private static func read(_ url: URL, from offset: Int) -> String {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return "" }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    // MARK: The end of a test

    private func finish(sourceLocation: SourceLocation) {
        // The air during the test itself, before the checks below add their own commands to it.
        let btmon = Self.read(environment.outDirectory.appendingPathComponent("btmon.txt"), from: btmonStart)
        for process in processes where process.isRunning {
            fail("\(process.label) still running at the end of the test: killed", sourceLocation: sourceLocation)
            process.stop(signal: SIGKILL, seconds: 10)
        }
        let strays = Self.runningPrograms([environment.msgpipe, environment.msgpipeLab])
        if !strays.isEmpty {
            fail("msgpipe still running at the end of the test (pids \(strays)): killed", sourceLocation: sourceLocation)
            for pid in strays { kill(pid, SIGKILL) }
        }
        if !waitForNoLinks(seconds: 20, endingThem: false) {
            fail("LE links still up 20 s after the test: \(LabControllers.leLinks())", sourceLocation: sourceLocation)
            _ = waitForNoLinks(seconds: 0, endingThem: true)
        }
        let instances = LabControllers.advertising().filter { $0.value.instances > 0 }.mapValues(\.instances)
        if !instances.isEmpty {
            fail("advertising instances left behind (controller: count): \(instances)", sourceLocation: sourceLocation)
        }
        LabControllers.removeAdvertising()
        let seconds = Int(Date().timeIntervalSince(started).rounded())
        let failed = !failures.isEmpty
        if failed { report(btmon: btmon, oopses: LabKernelLog.oopses(in: kernelLog.newLines())) }
        try? notes.map { $0 + "\n" }.joined().write(to: directory.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        if let skipped { try? skipped.write(to: directory.appendingPathComponent("skip.txt"), atomically: true, encoding: .utf8) }
        let status = failed ? "1" : skipped == nil ? "0" : "skip"
        if let results = environment.resultsFile, let handle = FileHandle(forWritingAtPath: results) {
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: Data("\(status) \(seconds) \(directory.path) \(filter) \(name)\n".utf8))
            try? handle.close()
        }
    }

    /// Prints (and writes to failure.txt) what failed, each program's command, exit and output tails, the tail of
    /// what btmon saw during the test, and the lines of the guest kernel's oopses during it, which also go to
    /// `kernel-oops.txt`: a test that failed with that file may have failed for the kernel's bug, not msgpipe's.
    private func report(btmon: String, oopses: [String]) {
        var text = failures.map { "failed: \($0)\n" }.joined()
        for process in processes {
            text += "$ \(process.commandLine)\n  \(process.exit.map(String.init(describing:)) ?? "running")\n"
            text += Self.tail(process.stderr, lines: 25).map { "  err| \($0)\n" }.joined()
            let out = process.stdout
            if out.count <= 2_000, let printable = String(validating: out, as: UTF8.self) {
                text += Self.tail(printable, lines: 10).map { "  out| \($0)\n" }.joined()
            } else {
                text += "  out| (\(out.count) bytes in \(process.stdoutFile.path))\n"
            }
        }
        text += Self.tail(btmon, lines: 40).map { "  btmon| \($0)\n" }.joined()
        if !oopses.isEmpty {
            text += "the guest kernel oopsed during the test (docs/LAB.md):\n" + oopses.map { "  kernel| \($0)\n" }.joined()
            try? oopses.map { $0 + "\n" }.joined().write(to: directory.appendingPathComponent("kernel-oops.txt"), atomically: true,
                encoding: .utf8)
        }
        print(text)
        try? text.write(to: directory.appendingPathComponent("failure.txt"), atomically: true, encoding: .utf8)
    }

    /// `id` as a regular expression that matches it whole and nothing else, with no space in it (lab-test.sh reads
    /// it as one word).
    static func exactFilter(_ id: String) -> String {
        let special = Set("\\^$.|?*+()[]{}")
        return "^" + id.map { $0 == " " ? "\\x20" : special.contains($0) ? "\\\($0)" : "\($0)" }.joined() + "$"
    }

    private static func tail(_ text: String, lines: Int) -> [Substring] {
        text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).filter { !$0.isEmpty }
    }

    /// The pids of running processes whose executable is one of `paths`.
    static func runningPrograms(_ paths: [String]) -> [Int32] {
        let wanted = Set(paths.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path })
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), pid != getpid(),
                let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/exe"),
                wanted.contains(exe)
            else { return nil }
            // A zombie (exited, not yet reaped) is not running.
            let stat = (try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8)) ?? ""
            return stat.contains(") Z ") ? nil : pid
        }
    }
}
