import Foundation
import Glibc
import TestSupport

/// How a process the lab started ended.
enum LabExit: Equatable, CustomStringConvertible {
    case status(Int32)
    case signal(Int32)
    /// Still running after the bound it was given: then killed with SIGKILL.
    case timedOut(seconds: Double)

    var description: String {
        switch self {
        case .status(let code): "exit \(code)"
        case .signal(let number): "killed by signal \(number)"
        case .timedOut(let seconds): "did not exit within \(Int(seconds)) s: killed"
        }
    }
}

/// A program a lab test runs, its standard output and standard error each in a file of the test's log directory
/// (`LABEL.out`, `LABEL.err`), so a test reads them while it runs and a failure shows them.
final class LabProcess {
    let label: String
    let commandLine: String
    let stdoutFile: URL
    let stderrFile: URL
    private let process = Process()
    private(set) var exit: LabExit?

    /// Where `type(_:)` writes: the standard input of a process started with `interactive`.
    private let keyboard: Pipe?

    /// Starts `executable arguments...` with standard input from `input` (a file), from a pipe that `type(_:)`
    /// writes to (`interactive`), else from /dev/null.
    init(label: String, executable: String, arguments: [String], directory: URL, input: URL? = nil, interactive: Bool = false) throws {
        self.label = label
        commandLine = ([executable] + arguments).joined(separator: " ")
        stdoutFile = directory.appendingPathComponent("\(label).out")
        stderrFile = directory.appendingPathComponent("\(label).err")
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        keyboard = interactive ? Pipe() : nil
        // A write after the process closed its input must fail, not kill the test bundle.
        if interactive { signal(SIGPIPE, SIG_IGN) }
        process.standardInput = try keyboard ?? input.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.runWithNoSignalBlocked()
    }

    /// Writes `line` and a newline to the standard input of a process started with `interactive` (a process
    /// that is gone reads nothing more: the write is dropped).
    func type(_ line: String) {
        guard process.isRunning else { return }
        try? keyboard?.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// Everything written to standard output so far.
    var stdout: [UInt8] { (try? [UInt8](Data(contentsOf: stdoutFile))) ?? [] }
    /// Everything written to standard error so far.
    var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }
    /// Standard output's lines decoded as JSON objects of type `T` (a line that does not decode is left out).
    func jsonLines<T: Decodable>(_: T.Type) -> [T] {
        String(decoding: stdout, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONDecoder().decode(T.self, from: Data($0.utf8))
        }
    }

    /// Standard output so far as text (for the C peers and lab-probe, which print lines, not JSON).
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }

    /// Waits until standard error contains `text` (true), or `seconds` passed or the process ended (false).
    func waitForStderr(containing text: String, seconds: Double = 60) -> Bool {
        waitFor(text, in: { self.stderr }, seconds: seconds)
    }

    /// Waits until standard output contains `text` (true), or `seconds` passed or the process ended (false).
    func waitForStdout(containing text: String, seconds: Double = 60) -> Bool {
        waitFor(text, in: { self.stdoutText }, seconds: seconds)
    }

    private func waitFor(_ text: String, in output: () -> String, seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if output().contains(text) { return true }
            if !process.isRunning { return output().contains(text) }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }

    /// Waits at most `seconds` for the exit; past that kills it with SIGKILL (a wedged peer fails, not hangs).
    @discardableResult
    func wait(seconds: Double) -> LabExit {
        if let exit { return exit }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            exit = .timedOut(seconds: seconds)
        } else {
            process.waitUntilExit()
            exit = process.terminationReason == .exit
                ? .status(process.terminationStatus) : .signal(process.terminationStatus)
        }
        return exit!
    }

    /// Sends `signal` (SIGTERM unless told) and waits at most `seconds` for the exit.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, seconds: Double = 30) -> LabExit {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return wait(seconds: seconds)
    }
}

/// Runs a short helper command (hcitool, btmgmt, busctl) to its end: its exit status and both outputs together.
@discardableResult
func labShell(_ arguments: [String], seconds: Double = 30) -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["timeout", String(Int(seconds))] + arguments
    let pipe = Pipe()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = pipe
    process.standardError = pipe
    do { try process.runWithNoSignalBlocked() } catch { return (127, "\(arguments[0]): \(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
