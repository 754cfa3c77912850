import Glibc
import MsgPipe
import MsgPipeCLI
import Synchronization
import Transport

/// `listen --kill-after-bytes N`: SIGKILLs the process once the packets it received, over all its connections,
/// came to N bytes, so a receiver that dies mid-message (nothing written, no goodbye on the link) can be shown.
final class KillAfterBytes: Sendable {
    private let limit: Int
    private let received = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    func observe(_ event: LinkEvent, on link: any PipeLink) {
        guard case let .packet(packet) = event else { return }
        let total = received.add(packet.count, ordering: .relaxed).newValue
        if total >= limit {
            BluetoothDiagnostics.print("killing itself after \(total) bytes received (--kill-after-bytes)")
            kill(getpid(), SIGKILL)
        }
    }
}
