import Synchronization
@testable import BLELink

/// Simulated time for the transaction timeout: sleepers wake only when a test advances the clock.
final class ManualTime: Sendable {
    private struct State {
        var now: Duration = .zero
        var sleepers: [(deadline: Duration, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var clock: ATTClock {
        ATTClock(now: { self.state.withLock { $0.now } }, sleepUntil: { deadline in await self.sleep(until: deadline) })
    }

    /// Number of tasks sleeping on this clock.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    private func sleep(until deadline: Duration) async {
        await withCheckedContinuation { continuation in
            let due = state.withLock { state in
                if deadline <= state.now { return true }
                state.sleepers.append((deadline, continuation))
                return false
            }
            if due { continuation.resume() }
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
