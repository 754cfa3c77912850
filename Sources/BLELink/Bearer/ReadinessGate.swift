import GATT
import Synchronization

/// The isReady-to-update contract as a gate: senders wait while the bearer is not ready (its socket said
/// EAGAIN) and are all released when it becomes writable again (POLLOUT), or fail when it goes away.
///
/// Minimal internal stand-in for the Backpressure module's readiness primitive.
final class ReadinessGate: Sendable {
    private struct State {
        var isReady = true
        var failure: ATTError?
        var waiters: [UInt64: CheckedContinuation<Result<Void, ATTError>, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// True while senders may go ahead.
    var isReady: Bool { state.withLock { $0.isReady && $0.failure == nil } }

    /// The bearer refused a write: later waiters suspend until ``open()``.
    func close() { state.withLock { $0.isReady = false } }

    /// The bearer is writable again: releases every waiter.
    func open() {
        let waiters = state.withLock { state in
            state.isReady = true
            defer { state.waiters.removeAll() }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: .success(())) }
    }

    /// The bearer is gone: every waiter, now and later, fails with `error`.
    func fail(_ error: ATTError) {
        let waiters = state.withLock { state in
            if state.failure == nil { state.failure = error }
            defer { state.waiters.removeAll() }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
    }

    /// Returns at once while ready, else suspends until ``open()``; throws the failure or ``ATTError/cancelled``.
    func wait() async throws(ATTError) {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, ATTError>, Never>) in
                let immediate: Result<Void, ATTError>? = state.withLock { state in
                    if let failure = state.failure { return .failure(failure) }
                    if state.isReady { return .success(()) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: .failure(.cancelled))
        }
        try result.get()
    }
}
