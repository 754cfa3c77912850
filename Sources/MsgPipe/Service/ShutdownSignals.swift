public import UnixSignals

extension UnixSignalsSequence {
    /// SIGINT and SIGTERM, caught from the return on (their default action, terminating at once, is replaced):
    /// how a service learns it should clean up and exit. A signal that arrives before anyone waits is kept for
    /// ``firstSignal()``. The sequence must live until the service ends: its signal sources are cancelled when
    /// the last reference goes.
    ///
    /// ```swift
    /// let signals = await UnixSignalsSequence.shutdown()
    /// let served = await signals.cancellingOnSignal(onSignal: { acceptor.stop() }) { try await serve() }
    /// ```
    public static func shutdown() async -> UnixSignalsSequence {
        await UnixSignalsSequence(trapping: .sigint, .sigterm)
    }

    /// Suspends until a signal arrives (or has arrived) and returns it; nil when the sequence ended. Iterates
    /// the sequence, so it is called once.
    public func firstSignal() async -> UnixSignal? {
        for await signal in self { return signal }
        return nil
    }

    /// Runs `work` in a task that the first signal cancels, after `onSignal` (which can stop what cancellation
    /// does not reach, such as an accept loop); returns how `work` ended, after it ended. Waits for the first
    /// signal, so it is called once per sequence.
    public func cancellingOnSignal<Value: Sendable>(
        onSignal: @escaping @Sendable () -> Void = {}, _ work: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error> {
        let working = Task { try await work() }
        let watching = Task {
            guard await firstSignal() != nil else { return }
            onSignal()
            working.cancel()
        }
        defer { watching.cancel() }
        return await working.result
    }
}
