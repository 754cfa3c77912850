import Synchronization

/// The isReady-to-update contract: a send attempt the bearer may refuse ("queue full", `EAGAIN`, CoreBluetooth's
/// `updateValue` returning NO), after which the sender suspends until ``signalReady()`` and retries the same
/// attempt, exactly where it stopped.
///
/// Senders take turns in arrival order (FIFO): while one sender waits for readiness, later senders queue
/// behind it, so packets leave in the order `send` was called. A `signalReady()` that happens between a
/// refusal and the suspension is never lost (the gate counts signals). A cancelled sender is removed and
/// throws `CancellationError` without consuming a signal meant for the next one. No polling.
public final class ReadinessGate: Sendable {
    private struct State {
        var readySignals: UInt64 = 0
        var turnHeld = false
        var turnWaiters = WaiterQueue<Void, WakeUp>()
        var readyWaiters = WaiterQueue<Void, WakeUp>()
        var nextWaiterID: UInt64 = 0

        mutating func makeWaiterID() -> UInt64 {
            nextWaiterID &+= 1
            return nextWaiterID
        }
    }

    private let state = Mutex(State())
    private let onSenderQueued: (@Sendable () -> Void)?

    /// Creates an open gate with no sender waiting.
    public init() { onSenderQueued = nil }

    /// A gate that reports each sender it queues behind another (tests use it to order senders without polling).
    init(onSenderQueued: @escaping @Sendable () -> Void) { self.onSenderQueued = onSenderQueued }

    /// Runs `attempt` until it returns true (the bearer accepted), suspending after each refusal (false)
    /// until the bearer signals readiness. Errors thrown by `attempt` end the send and are rethrown.
    public func send(_ attempt: () throws -> Bool) async throws {
        try await acquireTurn()
        defer { releaseTurn() }
        while true {
            try Task.checkCancellation()
            let signalsBeforeAttempt = state.withLock { $0.readySignals }
            if try attempt() { return }
            try await waitForReady(after: signalsBeforeAttempt)
        }
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

    /// Number of senders waiting for their turn or for readiness (for tests and diagnostics).
    public var waitingSenders: Int {
        state.withLock { $0.turnWaiters.count + $0.readyWaiters.count }
    }

    private func acquireTurn() async throws {
        let id = state.withLock { $0.makeWaiterID() }
        let wakeUp = await suspend(id: id, cancelledValue: WakeUp.cancelled) { continuation in
            let immediate = state.withLock { state -> WakeUp? in
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
