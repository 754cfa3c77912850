/// LE discovery through the management interface (active scanning: advertising data and scan response
/// arrive merged in one Device Found event).
public enum Scanner {
    /// The time between discovery restarts within one scan.
    static let refreshInterval: Duration = .seconds(4)

    /// Scans `adapter` for `duration`, calling `onMatch` the first time each matching peer is seen
    /// (and again never); returns the matching peers sorted by RSSI, strongest first. With `stopAtFirstMatch`
    /// it returns as soon as one peer matches. Discovery is restarted every ``refreshInterval`` (and
    /// whenever the kernel ends it, after ~10 s) until the duration is over.
    public static func scan(
        adapter: BluetoothAdapter, using management: ManagementSocket, duration: Duration,
        filter: ScanFilter = ScanFilter(), stopAtFirstMatch: Bool = false,
        onMatch: (DiscoveredPeer) -> Void = { _ in }
    ) throws(BluetoothError) -> [DiscoveredPeer] {
        try adapter.requireReadyForLowEnergy()
        let deadline = Deadline.after(duration)
        var peers: [BluetoothPeer: DiscoveredPeer] = [:]
        var reported: Set<BluetoothPeer> = []
        /// Most distinct peers remembered in one scan: a bound on memory in a crowded room.
        let peerLimit = 4096
        var owns = try startDiscovery(adapter, management)
        defer { if owns { _ = try? management.execute(.stopDiscovery(adapter.index)) } }
        var refreshAt = Deadline.after(refreshInterval)
        var ownStops = 0
        scanning: while !deadline.hasPassed {
            if refreshAt.hasPassed {
                // A new discovery resets the controller's duplicate filter: a peer whose first report came
                // without its scan response (so without its name) gets another chance.
                if owns {
                    if (try? management.execute(.stopDiscovery(adapter.index))) != nil { ownStops += 1 }
                    owns = try startDiscovery(adapter, management)
                }
                refreshAt = .after(refreshInterval)
            }
            guard let event = try management.nextEvent(until: min(deadline, refreshAt)) else { continue }
            guard event.controllerIndex == adapter.index else { continue }
            switch event.kind {
            case let .deviceFound(found):
                var peer = peers[found.peer] ?? DiscoveredPeer(peer: found.peer, rssi: found.rssi)
                peer.merge(found)
                if peers[found.peer] != nil || peers.count < peerLimit { peers[found.peer] = peer }
                if filter.matches(peer), !reported.contains(peer.peer) {
                    reported.insert(peer.peer)
                    onMatch(peer)
                    if stopAtFirstMatch { break scanning }
                }
            case .discovering(_, active: false):
                if ownStops > 0 {
                    ownStops -= 1
                } else if !deadline.hasPassed {
                    owns = try startDiscovery(adapter, management)  // the kernel or its owner ended it: go on
                }
            default:
                continue
            }
        }
        return reported.compactMap { peers[$0] }.sorted { ($0.rssi, $1.peer.address) > ($1.rssi, $0.peer.address) }
    }

    /// Starts an LE discovery and returns true; false when another one runs (mgmt Busy: bluetoothd's, another
    /// tool's). Its Device Found events reach every management socket, so the scan uses them, and never stops
    /// a discovery it did not start (that would end the other client's scan).
    private static func startDiscovery(
        _ adapter: BluetoothAdapter, _ management: ManagementSocket
    ) throws(BluetoothError) -> Bool {
        do {
            try management.execute(.startDiscovery(adapter.index))
            return true
        } catch .commandFailed(_, .busy) {
            return false
        }
    }
}
