import Foundation
import TestSupport

/// A running `msgpipe listen` (or any msgpipe command) with its standard error readable while it runs, so a
/// test can wait for the ready line, and its standard output collected to the end.
final class RunningMsgPipe: @unchecked Sendable {
    let process = Process()
    private let output: OutputCollector
    private let condition = NSCondition()
    private var errorText = ""
    private var errorEnded = false

    /// Starts `msgpipe arguments...`; `watchdog` seconds later it is killed with SIGKILL if still running.
    init(_ arguments: [String], input: [UInt8]? = nil, watchdog: Double = 120) throws {
        process.executableURL = MsgPipeProcess.binary(for: arguments)
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        if let input {
            let stdin = Pipe()
            process.standardInput = stdin
            try process.run()
            Thread {
                feed(input, to: stdin)
            }.start()
        } else {
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        output = OutputCollector(stdout.fileHandleForReading)
        // A wedged process fails its test (killed, status 9) instead of hanging the suite.
        let process = process
        DispatchQueue.global().asyncAfter(deadline: .now() + watchdog) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        let handle = stderr.fileHandleForReading
        Thread { [self] in
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty {
                    errorEnded = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                errorText += String(decoding: data, as: UTF8.self)
                condition.broadcast()
                condition.unlock()
            }
        }.start()
    }

    /// Waits until standard error contains `text` (true) or `seconds` passed or the process ended (false).
    func waitForError(containing text: String, seconds: Double = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !errorText.contains(text) {
            if errorEnded || !condition.wait(until: deadline) { return errorText.contains(text) }
        }
        return true
    }

    /// Waits for the exit; the status and everything written.
    func finish() -> MsgPipeProcess.Result {
        process.waitUntilExit()
        let out = output.bytes()
        condition.lock()
        while !errorEnded { condition.wait() }
        defer { condition.unlock() }
        return MsgPipeProcess.Result(status: process.terminationStatus, stdout: out, stderr: errorText)
    }

    var stderrSoFar: String {
        condition.lock()
        defer { condition.unlock() }
        return errorText
    }
}

/// A fresh directory for one test's socket and files (short path: UNIX socket paths are limited).
func makeScratchDirectory() throws -> URL {
    let url = URL(fileURLWithPath: "/tmp/mp-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Reads a pipe to its end on a thread of its own; `bytes()` waits for the end.
final class OutputCollector: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)
    private var finished = false

    init(_ handle: FileHandle) {
        Thread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }.start()
    }

    func bytes() -> [UInt8] {
        if !finished {
            done.wait()
            finished = true
        }
        return [UInt8](data)
    }
}
