/// What runs one request's command for a ``RequestServer``. ExchangePosix's `CommandRunner` runs a shell
/// command in a child process.
///
/// Contract: `run` returns the outcome and never the partial output of a command still running; output over
/// `maximumOutputSize` ends the command with ``CommandOutcome/outputTooLarge(limit:)``; a cancelled calling
/// task ends it promptly with ``CommandOutcome/cancelled``. It throws only when the command could not start.
public protocol CommandRunning: Sendable {
    /// Runs the command once with `input` on its standard input.
    func run(input: [UInt8], maximumOutputSize: Int) async throws(ExchangeError) -> CommandOutcome
}
