import BLELink
import Glibc
import Synchronization

/// The write end of the self-pipe the signal handler writes the signal number to (set once, before the
/// handler is installed; the handler only calls async-signal-safe `write`).
nonisolated(unsafe) private var shutdownPipeWrite: Int32 = -1

/// SIGINT and SIGTERM as an event: `listen` serves until one arrives, then cleans up (the socket file,
/// advertising) and exits 0. The handlers are installed synchronously by `init` (a signal that arrives any
/// time after it is caught); cleanup actions registered while serving run on the signal, in reverse order.
final class ShutdownSignal: Sendable {
    private struct State {
        var cleanups: [@Sendable () -> Void] = []
        var waiter: CheckedContinuation<Int32, Never>?
        var received: Int32?
    }

    private let state = Mutex(State())

    /// Catches SIGINT and SIGTERM from now on (their default action, terminating at once, is replaced).
    init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        shutdownPipeWrite = fds[1]
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(shutdownPipeWrite, &byte, 1)
            }
        }
        let readEnd = fds[0]
        Task { [self] in
            let number = try? await BlockingCall.run { () throws(BluetoothError) -> Int32 in
                var byte: UInt8 = 0
                while read(readEnd, &byte, 1) < 0 && errno == EINTR {}
                return Int32(byte)
            }
            deliver(number ?? SIGTERM)
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
