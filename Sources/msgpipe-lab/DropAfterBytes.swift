import MsgPipe
import MsgPipeCLI
import Synchronization
import Transport

/// `--drop-after-bytes N`: drops a connection once N bytes arrived on it (counting from each `.connected`),
/// so a sender's reconnect and Transport's resume can be shown without a radio.
final class DropAfterBytes: Sendable {
    private let limit: Int
    private let received = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    func observe(_ event: LinkEvent, on link: any PipeLink) {
        switch event {
        case .connected:
            received.store(0, ordering: .relaxed)
        case let .packet(packet):
            let before = received.add(packet.count, ordering: .relaxed).newValue - packet.count
            if before < limit && before + packet.count >= limit {
                BluetoothDiagnostics.print("dropping the connection after \(before + packet.count) bytes (--drop-after-bytes)")
                Task { await link.disconnect() }  // once per connection
            }
        case .maximumPacketSizeChanged, .disconnected:
            break
        }
    }
}
