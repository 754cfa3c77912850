/// The peripheral role end to end: holds the adapter's ATT channel, advertises, and hands out one connected
/// ATT socket per central; advertising is re-enabled after each disconnect. Blocking; use from one thread.
public final class BLEPeripheral {
    public let adapter: BluetoothAdapter
    public let advertisement: Advertisement
    private let management: ManagementSocket
    private let listener: ATTListener
    private var lastPeer: BluetoothPeer?
    /// How long to wait for the previous central's link to go down before advertising again.
    static let disconnectWait = 10.0

    /// Resolves the adapter, checks it is powered with LE, binds the ATT channel (so a busy channel fails
    /// before anything is advertised) and starts advertising.
    public init(
        adapter selector: AdapterSelector, advertisement: Advertisement, security: L2CAPSecurityLevel = .low
    ) throws(BluetoothError) {
        let management = try ManagementSocket()
        let adapter = try BluetoothAdapter.resolve(selector, using: management)
        try adapter.requireReadyForLowEnergy()
        self.listener = try ATTListener(adapter: adapter, security: security)
        self.management = management
        self.adapter = adapter
        self.advertisement = advertisement
        try Advertiser.start(advertisement, on: adapter, using: management)
    }

    /// Waits for the next central (nil deadline: forever); nil when the deadline passes first. Before
    /// accepting again it waits for the previous central's link to drop and restarts advertising.
    public func nextConnection(until deadline: Deadline? = nil) throws(BluetoothError) -> L2CAPConnection? {
        if let previous = lastPeer {
            try waitUntilDisconnected(previous)
            try Advertiser.start(advertisement, on: try currentAdapter(), using: management)
            lastPeer = nil
        }
        guard let connection = try listener.accept(until: deadline) else { return nil }
        lastPeer = connection.peer
        return connection
    }

    /// Stops advertising (the listener closes when this object goes away).
    public func stop() {
        _ = try? Advertiser.stop(advertisement, on: adapter, using: management)
    }

    private func currentAdapter() throws(BluetoothError) -> BluetoothAdapter {
        try BluetoothAdapter.resolve(.index(adapter.index), using: management)
    }

    private func waitUntilDisconnected(_ peer: BluetoothPeer) throws(BluetoothError) {
        let deadline = Deadline.after(seconds: Self.disconnectWait)
        let connections = try decodeConnectionList(try management.execute(.getConnections(adapter.index))[...])
        guard connections.contains(where: { $0.address == peer.address }) else { return }
        while let event = try management.nextEvent(until: deadline) {
            if event.controllerIndex == adapter.index, case let .deviceDisconnected(gone, _) = event.kind,
                gone.address == peer.address
            {
                return
            }
        }
    }
}
