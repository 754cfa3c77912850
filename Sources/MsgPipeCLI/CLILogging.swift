import Logging
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
