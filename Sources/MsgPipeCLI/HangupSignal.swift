import BLELink
import Glibc
import Synchronization

/// The write end of SIGHUP's self-pipe (set once, before the handler is installed; the handler only calls
/// async-signal-safe `write`).
nonisolated(unsafe) private var hangupPipeWrite: Int32 = -1

/// SIGHUP as a repeating event: each signal runs the registered actions once, one signal after the other
/// (signals that arrive while they run are coalesced into one more run). Installed on first use; until then
/// SIGHUP keeps its default action (terminate).
final class HangupSignal: Sendable {
    static let shared = HangupSignal()

    private let actions = Mutex<[@Sendable () async -> Void]>([])

    private init() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)  // a full pipe already holds a pending reload
        hangupPipeWrite = fds[1]
        signal(SIGHUP) { _ in
            var byte: UInt8 = 1
            _ = write(hangupPipeWrite, &byte, 1)
        }
        let readEnd = fds[0]
        Task.detached { [self] in
            while true {
                let got = try? await BlockingCall.run { () throws(BluetoothError) -> Bool in
                    var bytes = [UInt8](repeating: 0, count: 64)
                    while true {
                        let count = read(readEnd, &bytes, bytes.count)
                        if count > 0 { return true }
                        if count < 0 && errno == EINTR { continue }
                        return false
                    }
                }
                guard got == true else { return }
                for action in actions.withLock({ $0 }) { await action() }
            }
        }
    }

    /// Runs `action` on every SIGHUP from now on.
    func onSignal(_ action: @escaping @Sendable () async -> Void) {
        actions.withLock { $0.append(action) }
    }
}
