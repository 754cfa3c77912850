/// The peripheral's count of centrals it has handed out whose LE link is still up: one slot per accepted ATT
/// connection, freed when the kernel reports the central's link gone (Device Disconnected, or its absence
/// from Get Connections). A link carries every ATT connection of its central, so a disconnect frees all of
/// that address's slots. Pure bookkeeping: ``BLEPeripheral`` feeds it the management events.
struct ConnectionSlots: Sendable, Equatable {
    /// The centrals handed out, oldest first (an address twice: two ATT connections over one link).
    private(set) var peers: [BluetoothPeer] = []

    var count: Int { peers.count }

    /// True while fewer than `maximum` slots are taken.
    func hasRoom(maximum: Int) -> Bool { peers.count < maximum }

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
