import GATT
import Logging
import Synchronization
import Transport

/// The hidden `--drop-after-bytes N` test and lab hook of the receiving commands: drops a connection once N
/// bytes arrived on it, so a sender's reconnect and Transport's resume can be shown without a radio.
final class DropAfterBytesHook: Sendable {
    private let limit: Int?
    private let logger: Logger
    /// Bytes received on the current connection.
    private let received = Atomic<Int>(0)

    init(limit: Int?, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    /// Counts `event` (a `.connected` starts the count again) and drops `link`'s connection once, when the
    /// limit is crossed.
    func observe(_ event: LinkEvent, on link: PeerLink) {
        guard let limit else { return }
        switch event {
        case .connected:
            received.store(0, ordering: .relaxed)
        case let .packet(packet):
            let before = received.add(packet.count, ordering: .relaxed).newValue - packet.count
            if before < limit && before + packet.count >= limit {
                logger.warning("dropping the connection after \(before + packet.count) bytes (--drop-after-bytes)")
                Task { await link.disconnect() }  // a test hook, once per connection
            }
        case .maximumPacketSizeChanged, .disconnected:
            break
        }
    }
}
