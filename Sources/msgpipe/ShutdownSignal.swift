import Dispatch
import Glibc
import Synchronization

/// SIGINT and SIGTERM as an event: `listen` serves until one arrives, then cleans up (the socket file,
/// advertising) and exits 0. Cleanup actions registered while serving run on the signal, in reverse order.
final class ShutdownSignal: Sendable {
    private struct State {
        var cleanups: [@Sendable () -> Void] = []
        var waiter: CheckedContinuation<Int32, Never>?
        var received: Int32?
    }

    private let state = Mutex(State())
    /// Kept alive for the life of the process; written only in `init`.
    nonisolated(unsafe) private var sources: [any DispatchSourceSignal] = []

    /// Catches SIGINT and SIGTERM from now on (their default action, terminating at once, is disabled).
    init() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.deliver(number) }
            source.resume()
            sources.append(source)
        }
    }

    /// Registers an action to run when a signal arrives (before ``wait()`` returns).
    func onSignal(_ cleanup: @escaping @Sendable () -> Void) {
        state.withLock { $0.cleanups.append(cleanup) }
    }

    /// Suspends until SIGINT or SIGTERM arrives; returns its number.
    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let received = state.withLock { state -> Int32? in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }

    private func deliver(_ number: Int32) {
        let (cleanups, waiter) = state.withLock { state in
            guard state.received == nil else { return ([@Sendable () -> Void](), CheckedContinuation<Int32, Never>?.none) }
            state.received = number
            defer {
                state.cleanups = []
                state.waiter = nil
            }
            return (state.cleanups, state.waiter)
        }
        for cleanup in cleanups.reversed() { cleanup() }
        waiter?.resume(returning: number)
    }
}
