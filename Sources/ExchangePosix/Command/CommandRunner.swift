import Dispatch
public import Exchange
import Glibc

/// Runs the serve command: `/bin/sh -c COMMAND` with the request body on standard input; its standard
/// output is the response. Bounded by a timeout and an output limit; a cancelled task (serve got SIGTERM)
/// kills the command's whole process group.
public struct CommandRunner: CommandRunning {
    public var command: String
    public var timeout: Duration
    public var maximumOutputSize: Int

    public init(command: String, timeout: Duration = .seconds(60), maximumOutputSize: Int = 256 << 10) {
        self.command = command
        self.timeout = timeout
        self.maximumOutputSize = maximumOutputSize
    }

    /// Runs the command once with `input`; the blocking conversation runs on a Dispatch thread, not on the
    /// cooperative pool.
    public func run(input: [UInt8]) async throws(ExchangeError) -> CommandOutcome {
        signal(SIGPIPE, SIG_IGN)  // a command that stops reading must not kill serve
        let cancel = try CancelPipe()
        let spawned = try SpawnedCommand(command: command)
        let (seconds, attoseconds) = timeout.components
        let deadline = SpawnedCommand.monotonicNanoseconds()
            + UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let limit = maximumOutputSize
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CommandOutcome, Never>) in
                DispatchQueue.global().async {
                    var process = spawned
                    continuation.resume(returning: process.communicate(
                        stdin: input, deadline: deadline, maximumOutput: limit, cancel: cancel))
                }
            }
        } onCancel: {
            cancel.fire()
        }
        cancel.close()
        return outcome
    }

    /// Runs the command once with `input`, its output bounded by `maximumOutputSize` instead of this runner's.
    public func run(input: [UInt8], maximumOutputSize: Int) async throws(ExchangeError) -> CommandOutcome {
        var runner = self
        runner.maximumOutputSize = maximumOutputSize
        return try await runner.run(input: input)
    }
}
