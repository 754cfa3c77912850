/// The peripheral's count of centrals it has handed out whose LE link is still up: one slot per central's
/// link (however many ATT connections it opened over it), freed when the kernel reports the central's link gone (Device Disconnected, or its absence
/// from Get Connections). A link carries every ATT connection of its central, so a disconnect frees all of
/// that address's slots. Pure bookkeeping: ``BLEPeripheral`` feeds it the management events.
struct ConnectionSlots: Sendable, Equatable {
    /// The centrals handed out, oldest first (an address twice: two ATT connections over one link).
    private(set) var peers: [BluetoothPeer] = []

    /// Centrals linked: distinct addresses (ATT connections over one link share its slot).
    var count: Int { Set(peers.map(\.address)).count }

    /// True while fewer than `maximum` centrals are linked.
    func hasRoom(maximum: Int) -> Bool { count < maximum }

    /// Whether `peer`'s link already holds a slot.
    func isLinked(_ peer: BluetoothPeer) -> Bool { peers.contains { $0.address == peer.address } }

    /// A connection was accepted from `peer`.
    mutating func taken(by peer: BluetoothPeer) { peers.append(peer) }

    /// The kernel says `peer`'s link went down: every slot of that address is free.
    mutating func linkDown(_ peer: BluetoothPeer) { peers.removeAll { $0.address == peer.address } }

    /// Get Connections listed the links up now: slots whose link is not among them are free.
    mutating func keepOnly(linksUp: [BluetoothPeer]) {
        peers.removeAll { peer in !linksUp.contains { $0.address == peer.address } }
    }

    /// Frees every slot (the sequential peripheral gives a lingering link up after a while).
    mutating func removeAll() { peers.removeAll() }
}
