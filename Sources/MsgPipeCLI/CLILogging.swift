import Logging
import MsgPipe
import Synchronization

/// swift-log for the CLI: a StreamLogHandler on stderr, bootstrapped once per process; `--verbose` lowers
/// the level from warning to debug.
enum CLILogging {
    private static let bootstrapped = Mutex(false)

    /// A logger labelled `msgpipe.LABEL`.
    static func logger(_ label: String, verbose: Bool) -> Logger {
        bootstrapped.withLock { done in
            guard !done else { return }
            LoggingSystem.bootstrap(StreamLogHandler.standardError)
            done = true
        }
        var logger = Logger(label: "msgpipe.\(label)")
        logger.logLevel = verbose ? .debug : .warning
        return logger
    }
}

/// Writes `message` and a newline to standard error, prefixed with "msgpipe: ".
func printError(_ message: String) {
    try? OutputBuffer.write(Array("msgpipe: \(message)\n".utf8), to: 2)
}

extension FileIOError {
    /// The sysexits code: 66 (cannot open input) or 74 (I/O error).
    var exitCode: Int32 { operation == .open ? 66 : 74 }
}
