import Synchronization

/// The peripheral role end to end: holds the adapter's ATT channel, advertises, and hands out one connected
/// ATT socket per central; advertising is re-enabled after each disconnect. Calls block (run them with
/// ``BlockingCall``) and are serialized.
public final class BLEPeripheral: Sendable {
    public let adapter: BluetoothAdapter
    public let advertisement: Advertisement
    private let state: Mutex<State>
    /// How long to wait for the previous central's link to go down before advertising again.
    static let disconnectWait = 10.0

    private struct State: ~Copyable {
        let management: ManagementSocket
        let listener: ATTListener
        var lastPeer: BluetoothPeer?
    }

    /// Resolves the adapter, checks it is powered with LE, binds the ATT channel (so a busy channel fails
    /// before anything is advertised) and starts advertising.
    public init(
        adapter selector: AdapterSelector, advertisement: Advertisement, security: L2CAPSecurityLevel = .low
    ) throws(BluetoothError) {
        let management = try ManagementSocket()
        let adapter = try BluetoothAdapter.resolve(selector, using: management)
        try adapter.requireReadyForLowEnergy()
        let listener = try ATTListener(adapter: adapter, security: security)
        try Advertiser.start(advertisement, on: adapter, using: management)
        self.adapter = adapter
        self.advertisement = advertisement
        self.state = Mutex(State(management: management, listener: listener, lastPeer: nil))
    }

    /// Waits for the next central (nil deadline: forever); nil when the deadline passes first. Before
    /// accepting again it waits for the previous central's link to drop and restarts advertising.
    public func nextConnection(until deadline: Deadline? = nil) throws(BluetoothError) -> L2CAPConnection? {
        try state.withLock { (state: inout State) throws(BluetoothError) -> L2CAPConnection? in
            if let previous = state.lastPeer {
                try Self.waitUntilDisconnected(previous, adapter: adapter, management: state.management)
                let current = try BluetoothAdapter.resolve(.index(adapter.index), using: state.management)
                try Advertiser.start(advertisement, on: current, using: state.management)
                state.lastPeer = nil
            }
            guard let connection = try state.listener.accept(until: deadline) else { return nil }
            state.lastPeer = connection.peer
            return connection
        }
    }

    /// Stops advertising (the listener closes when this object goes away).
    public func stop() {
        state.withLock { state in
            _ = try? Advertiser.stop(advertisement, on: adapter, using: state.management)
        }
    }

    private static func waitUntilDisconnected(
        _ peer: BluetoothPeer, adapter: BluetoothAdapter, management: ManagementSocket
    ) throws(BluetoothError) {
        let deadline = Deadline.after(seconds: disconnectWait)
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
