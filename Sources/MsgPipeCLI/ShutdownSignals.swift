import UnixSignals

extension UnixSignalsSequence {
    /// SIGINT and SIGTERM, caught from the return on (their default action, terminating at once, is replaced):
    /// `listen` and `send --mqtt` serve until one arrives, then clean up and exit 0. A signal that arrives
    /// before anyone waits is kept for ``firstSignal()``. The sequence must live until the command ends: its
    /// signal sources are cancelled when the last reference goes.
    static func shutdown() async -> UnixSignalsSequence {
        await UnixSignalsSequence(trapping: .sigint, .sigterm)
    }

    /// Suspends until a signal arrives (or has arrived) and returns it; nil when the sequence ended. Iterates
    /// the sequence, so it is called once.
    func firstSignal() async -> UnixSignal? {
        for await signal in self { return signal }
        return nil
    }
}
