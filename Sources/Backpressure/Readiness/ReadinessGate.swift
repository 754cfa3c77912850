import Synchronization

/// The isReady-to-update contract: a send attempt the bearer may refuse ("queue full", `EAGAIN`, CoreBluetooth's
/// `updateValue` returning NO), after which the sender suspends until ``signalReady()`` and retries the same
/// attempt, exactly where it stopped.
///
/// Senders take turns in arrival order (FIFO): while one sender waits for readiness, later senders queue
/// behind it, so packets leave in the order `send` was called. A `signalReady()` that happens between a
/// refusal and the suspension is never lost (the gate counts signals). A cancelled sender is removed and
/// throws `CancellationError` without consuming a signal meant for the next one. No polling.
///
/// When the bearer goes away for good, ``fail(_:)`` wakes every waiting sender with its error, and every later
/// send throws it at once.
public final class ReadinessGate: Sendable {
    private struct State {
        var readySignals: UInt64 = 0
        /// The signal count seen by the last refused attempt: the gate is not ready until it changes.
        var refusedAt: UInt64?
        var failure: (any Error)?
        var turnHeld = false
        var turnWaiters = WaiterQueue<Void, WakeUp>()
        var readyWaiters = WaiterQueue<Void, WakeUp>()
        var nextWaiterID: UInt64 = 0

        mutating func makeWaiterID() -> UInt64 {
            nextWaiterID &+= 1
            return nextWaiterID
        }

        var isReady: Bool { failure == nil && refusedAt.map { $0 != readySignals } ?? true }
    }

    private let state = Mutex(State())
    private let onSenderQueued: (@Sendable () -> Void)?

    /// Creates an open gate with no sender waiting.
    public init() { onSenderQueued = nil }

    /// A gate that reports each sender it queues behind another (tests use it to order senders without polling).
    init(onSenderQueued: @escaping @Sendable () -> Void) { self.onSenderQueued = onSenderQueued }

    /// Runs `attempt` until it returns true (the bearer accepted), suspending after each refusal (false)
    /// until the bearer signals readiness. Errors thrown by `attempt` end the send and are rethrown; so does
    /// the gate's failure (see ``fail(_:)``). `attempt` runs on the caller's actor.
    public func send(
        isolation: isolated (any Actor)? = #isolation, _ attempt: () throws -> Bool
    ) async throws {
        try await acquireTurn()
        defer { releaseTurn() }
        while true {
            try Task.checkCancellation()
            let signalsBeforeAttempt = try state.withLock { state throws -> UInt64 in
                if let failure = state.failure { throw failure }
                return state.readySignals
            }
            if try attempt() { return }
            state.withLock { $0.refusedAt = signalsBeforeAttempt }
            try await waitForReady(after: signalsBeforeAttempt)
        }
    }

    /// Runs `attempt` once, now, if no sender holds the turn or waits for it (so it never overtakes one);
    /// returns whether the bearer accepted. A refusal makes the gate not ready until ``signalReady()``.
    /// Throws the gate's failure, or what `attempt` throws.
    public func trySend(_ attempt: () throws -> Bool) throws -> Bool {
        let signalsBeforeAttempt = try state.withLock { state throws -> UInt64? in
            if let failure = state.failure { throw failure }
            guard !state.turnHeld, state.turnWaiters.isEmpty else { return nil }
            state.turnHeld = true
            return state.readySignals
        }
        guard let signalsBeforeAttempt else { return false }
        defer { releaseTurn() }
        if try attempt() { return true }
        state.withLock { $0.refusedAt = signalsBeforeAttempt }
        return false
    }

    /// False from a refused attempt until the next ``signalReady()``, and for good after ``fail(_:)``.
    public var isReady: Bool { state.withLock { $0.isReady } }

    /// Returns once the gate is ready (at once if it is); throws the gate's failure, or `CancellationError`.
    /// It takes no turn: a send after it may still be refused.
    public func waitUntilReady() async throws {
        let refusedAt = try state.withLock { state throws -> UInt64? in
            if let failure = state.failure { throw failure }
            return state.isReady ? nil : state.refusedAt
        }
        guard let refusedAt else { return }
        try await waitForReady(after: refusedAt)
    }

    /// The bearer is ready for more (peripheralManagerIsReadyToUpdateSubscribers, POLLOUT): the waiting sender
    /// retries. Also call it when the bearer's state changed so that a waiting attempt now throws.
    public func signalReady() {
        let woken = state.withLock { state in
            state.readySignals &+= 1
            return state.readyWaiters.removeAll()
        }
        for waiter in woken { waiter.continuation.resume(returning: .granted) }
    }

    /// The bearer is gone for good: every waiting sender (for its turn or for readiness) throws `error`, and
    /// so does every later ``send(isolation:_:)``, ``trySend(_:)`` and ``waitUntilReady()``. The first
    /// failure wins.
    public func fail(_ error: any Error) {
        let (failure, woken) = state.withLock { state in
            if state.failure == nil { state.failure = error }
            return (state.failure ?? error, state.turnWaiters.removeAll() + state.readyWaiters.removeAll())
        }
        for waiter in woken { waiter.continuation.resume(returning: .failed(failure)) }
    }

    /// The error the gate failed with, if it did.
    public var failure: (any Error)? { state.withLock { $0.failure } }

    /// Number of senders waiting for their turn or for readiness (for tests and diagnostics).
    public var waitingSenders: Int {
        state.withLock { $0.turnWaiters.count + $0.readyWaiters.count }
    }

    private func acquireTurn() async throws {
        let id = state.withLock { $0.makeWaiterID() }
        let wakeUp = await suspend(id: id, cancelledValue: WakeUp.cancelled) { continuation in
            let immediate = state.withLock { state -> WakeUp? in
                if let failure = state.failure { return .failed(failure) }
                if !state.turnHeld && state.turnWaiters.isEmpty {
                    state.turnHeld = true
                    return .granted
                }
                if Task.isCancelled { return .cancelled }
                state.turnWaiters.append(id: id, payload: (), continuation: continuation)
                return nil
            }
            if immediate == nil { onSenderQueued?() }
            return immediate
        } cancel: { id in
            self.state.withLock { $0.turnWaiters.remove(id: id)?.continuation }
        }
        try wakeUp.get()
    }

    private func releaseTurn() {
        let next = state.withLock { state in
            if let next = state.turnWaiters.popFirst() { return Optional(next) }
            state.turnHeld = false
            return nil
        }
        next?.continuation.resume(returning: .granted)
    }

    private func waitForReady(after signals: UInt64) async throws {
        let id = state.withLock { $0.makeWaiterID() }
        let wakeUp = await suspend(id: id, cancelledValue: WakeUp.cancelled) { continuation in
            state.withLock { state -> WakeUp? in
                if let failure = state.failure { return .failed(failure) }
                if state.readySignals != signals { return .granted }
                if Task.isCancelled { return .cancelled }
                state.readyWaiters.append(id: id, payload: (), continuation: continuation)
                return nil
            }
        } cancel: { id in
            self.state.withLock { $0.readyWaiters.remove(id: id)?.continuation }
        }
        try wakeUp.get()
    }
}
