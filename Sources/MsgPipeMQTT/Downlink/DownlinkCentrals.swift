import MsgPipe
import Synchronization

/// The centrals a downlink delivers to: pipes added as centrals arrive, dropped once their session ended.
/// ``wait(after:)`` wakes a delivery waiting for a central when one is added (no polling).
final class DownlinkCentrals: Sendable {
    private struct State {
        var pipes: [MessagePipe] = []
        var version = 0
        var finished = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    func add(_ pipe: MessagePipe) {
        let waiters = state.withLock { state in
            state.pipes.append(pipe)
            state.version += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Forgets a pipe whose session ended (the central left for good).
    func remove(_ pipe: MessagePipe) {
        state.withLock { state in state.pipes.removeAll { $0 === pipe } }
    }

    /// Every central known.
    var all: [MessagePipe] { state.withLock { $0.pipes } }

    /// The centrals connected now.
    var connectedCount: Int { state.withLock { $0.pipes.count(where: \.isConnected) } }

    /// No central will be added any more: waits end.
    func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The centrals a message for `peer` goes to now, and the version to wait on when there are none: the
    /// named one (its latest pipe; named by its address, or with end-to-end keys by its key's name or text), or without a peer every connected central (when none is connected: every
    /// central whose session lasts, so the send waits for one to resume).
    func targets(for peer: String?) -> (pipes: [MessagePipe], version: Int) {
        state.withLock { state in
            guard let peer else {
                let connected = state.pipes.filter(\.isConnected)
                return (connected.isEmpty ? state.pipes : connected, state.version)
            }
            return (state.pipes.last { $0.answers(to: peer) }.map { [$0] } ?? [], state.version)
        }
    }

    /// Returns once a central was added after `version` (true), or on finish or cancellation (false).
    func wait(after version: Int) async -> Bool {
        let key = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.version != version || state.finished || Task.isCancelled { return true }
                    state.waiters[key] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
        return state.withLock { $0.version != version } && !Task.isCancelled
    }
}

extension MessagePipe {
    /// True when a downlink's `peer` names this central: its address, or its authenticated key's name or text.
    func answers(to peer: String) -> Bool {
        self.peer == peer || peerKey.map { $0.name == peer || $0.key.text == peer } == true
    }
}
