import Synchronization

/// Credit (window) accounting: `acquire(n)` takes n credits, suspending until they are available; `release(n)`
/// returns them. Waiters are served strictly in arrival order, so a large request is not starved by small ones.
///
/// Credits never exceed `capacity`: releasing more (a peer granting too much) is clamped. Cancelling a waiting
/// task removes it and may let the waiters behind it proceed.
public final class CreditPool: Sendable {
    private struct State {
        var available: Int
        var waiters = WaiterQueue<Int, WakeUp>()
        var nextWaiterID: UInt64 = 0

        /// Grants credits to the waiters at the head that fit, in order.
        mutating func grantWaiting() -> [CheckedContinuation<WakeUp, Never>] {
            var granted: [CheckedContinuation<WakeUp, Never>] = []
            while let head = waiters.first, head.payload <= available {
                available -= head.payload
                granted.append(head.continuation)
                _ = waiters.popFirst()
            }
            return granted
        }
    }

    /// The most credits the pool holds.
    public let capacity: Int
    private let state: Mutex<State>
    private let onWaiterQueued: (@Sendable () -> Void)?

    /// Creates a pool holding `capacity` credits, `initial` of them available (all by default).
    public convenience init(capacity: Int, initial: Int? = nil) {
        self.init(capacity: capacity, initial: initial, onWaiterQueued: nil)
    }

    /// A pool that reports each waiter it queues (tests use it to order waiters without polling).
    init(capacity: Int, initial: Int? = nil, onWaiterQueued: (@Sendable () -> Void)?) {
        self.capacity = max(0, capacity)
        self.state = Mutex(State(available: min(self.capacity, max(0, initial ?? capacity))))
        self.onWaiterQueued = onWaiterQueued
    }

    /// Credits available right now.
    public var available: Int { state.withLock { $0.available } }

    /// Tasks waiting for credits.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }

    /// Takes `count` credits, suspending in FIFO order until they are available.
    public func acquire(_ count: Int = 1) async throws {
        try validate(count)
        let id = state.withLock { state in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        let wakeUp = await suspend(id: id, cancelledValue: WakeUp.cancelled) { continuation in
            let immediate = state.withLock { state -> WakeUp? in
                if state.waiters.isEmpty && state.available >= count {
                    state.available -= count
                    return .granted
                }
                if Task.isCancelled { return .cancelled }
                state.waiters.append(id: id, payload: count, continuation: continuation)
                return nil
            }
            if immediate == nil { onWaiterQueued?() }
            return immediate
        } cancel: { id in
            let (cancelled, granted) = self.state.withLock { state in
                let cancelled = state.waiters.remove(id: id)?.continuation
                return (cancelled, state.grantWaiting())
            }
            for continuation in granted { continuation.resume(returning: .granted) }
            return cancelled
        }
        try wakeUp.get()
    }

    /// Takes `count` credits if they are available now and nobody waits ahead; returns whether it did.
    public func tryAcquire(_ count: Int = 1) -> Bool {
        guard count > 0 else { return false }
        return state.withLock { state in
            guard state.waiters.isEmpty, state.available >= count else { return false }
            state.available -= count
            return true
        }
    }

    /// Returns `count` credits (clamped to the capacity) and wakes the waiters they satisfy.
    public func release(_ count: Int = 1) {
        guard count > 0 else { return }
        let granted = state.withLock { state in
            state.available = min(capacity, state.available + count)
            return state.grantWaiting()
        }
        for continuation in granted { continuation.resume(returning: .granted) }
    }

    private func validate(_ count: Int) throws(BackpressureError) {
        guard count > 0 else { throw .invalidCreditCount(count) }
        guard count <= capacity else { throw .creditRequestExceedsCapacity(requested: count, capacity: capacity) }
    }
}
