import DequeModule
import Synchronization

/// A FIFO async mutex: ATT allows one outstanding request per bearer, so requests take turns.
final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
    }

    private let state = Mutex(State())

    /// Waits for the lock (not cancellable: a request already queued runs, its own timeout bounds it).
    func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Hands the lock to the next waiter, or frees it.
    func unlock() {
        let next = state.withLock { state in
            let next = state.waiters.popFirst()
            if next == nil { state.locked = false }
            return next
        }
        next?.resume()
    }
}
