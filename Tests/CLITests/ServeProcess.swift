import Foundation

/// A `msgpipe serve` running in the background for a test: started, ready once it printed "listening on",
/// then killed (SIGKILL or SIGTERM) and its output read.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    private let stdout = Pipe()
    private let stderr = Pipe()
    private var errorText = ""
    private var outputReader: ErrorCollector?

    /// Starts `msgpipe serve arguments...` and returns once it listens.
    init(_ arguments: [String]) throws {
        process.executableURL = MsgPipeProcess.binary
        process.arguments = ["serve"] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        outputReader = ErrorCollector(stdout.fileHandleForReading)
        // Blocking reads of stderr until the ready line (or the end, if serve failed to start).
        while !errorText.contains("listening on") {
            let chunk = stderr.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            errorText += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// Sends `signal` and waits for the process to end; returns its stdout (the --json lines) and stderr.
    /// SIGTERM (the default) lets serve finish the connection in progress, so every event line is out.
    func stop(signal: Int32 = SIGTERM) -> (stdout: String, stderr: String, status: Int32) {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        let rest = stderr.fileHandleForReading.readDataToEndOfFile()
        return (outputReader?.text() ?? "", errorText + String(decoding: rest, as: UTF8.self), process.terminationStatus)
    }
}
