import Synchronization

/// Whether a central's last renewal of its incoming path through bluetoothd brought anything. Transport asks
/// for a renewal when the peer is silent; a renewal after which no packet arrived before the next request was
/// fruitless, and the link then ends instead of renewing again, so the reconnect starts on a new connection
/// with a new GATT client in bluetoothd (docs/LAB.md, "kills 5": bluetoothd 5.66 went on notifying the
/// descriptor of an earlier subscription, and renewing did not bring it back).
final class RenewalWatch: Sendable {
    private let silentSinceRenewal = Atomic<Bool>(false)

    /// The reason a link gives when it ends for a fruitless renewal.
    static let fruitlessReason = "a renewed subscription brought no packet before the peer went silent again; "
        + "ending the connection, so the next one starts with a new subscription"

    /// A packet arrived: the path works.
    func packetArrived() {
        if silentSinceRenewal.load(ordering: .relaxed) { silentSinceRenewal.store(false, ordering: .relaxed) }
    }

    /// A renewal was made; until a packet arrives it counts as fruitless.
    func renewed() { silentSinceRenewal.store(true, ordering: .relaxed) }

    /// True when the last renewal brought no packet: end the link rather than renew again.
    var lastRenewalWasFruitless: Bool { silentSinceRenewal.load(ordering: .relaxed) }
}
