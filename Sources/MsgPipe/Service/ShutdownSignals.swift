import UnixSignals

/// SIGINT and SIGTERM, caught from ``init()`` on (their default action, terminating at once, is replaced): how a
/// service learns it should clean up and exit. A signal that arrives before anyone waits is kept for ``wait()``.
/// Keep the value until the service ends: its signal sources are cancelled when the last copy goes.
///
/// ```swift
/// let signals = await ShutdownSignals()
/// let served = await signals.cancellingOnSignal(onSignal: { await acceptor.close() }) { try await serve() }
/// ```
public struct ShutdownSignals: Sendable {
    private let signals: UnixSignalsSequence

    /// Catches SIGINT and SIGTERM from the return on.
    public init() async {
        signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
    }

    /// Suspends until a signal arrives (or has arrived). Iterates the signals, so it is called once per value.
    public func wait() async {
        for await _ in signals { return }
    }

    /// Runs `work` in a task that the first signal cancels once `onSignal` returned (it can stop what
    /// cancellation does not reach, such as an accept loop, while `work` still runs); returns how `work` ended,
    /// after it ended. Waits for the first signal, so it is called once per value.
    public func cancellingOnSignal<Value: Sendable>(
        onSignal: @escaping @Sendable () async -> Void = {}, _ work: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error> {
        let working = Task { try await work() }
        let watching = Task {
            await wait()
            guard !Task.isCancelled else { return }
            await onSignal()
            working.cancel()
        }
        defer { watching.cancel() }
        return await working.result
    }
}
