@testable import GATT
import Synchronization

/// Simulated time for the transaction timeout: sleepers wake only when a test advances the clock.
final class ManualTime: Sendable {
    private struct State {
        var now: Duration = .zero
        var sleepers: [(id: UInt64, deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    var clock: ATTClock {
        ATTClock(now: { self.state.withLock { $0.now } }, sleepUntil: { deadline in try await self.sleep(until: deadline) })
    }

    /// Number of tasks sleeping on this clock.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Returns at the deadline; throws `CancellationError` when the sleeping task is cancelled first.
    private func sleep(until deadline: Duration) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if deadline <= state.now { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.sleepers.append((id, deadline, continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                state.sleepers.firstIndex { $0.id == id }.map { state.sleepers.remove(at: $0) }
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time to `now`, waking every sleeper whose deadline passed.
    func advance(to now: Duration) {
        let due = state.withLock { state in
            state.now = now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
