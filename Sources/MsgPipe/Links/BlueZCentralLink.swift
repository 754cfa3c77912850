import Backpressure
public import BLELink
public import GATT
import Synchronization
public import Transport

/// The central's link through bluetoothd: a ``RelayLink`` that carries one ``BlueZCentral`` connection after
/// another, so a reconnect resumes Transport over the same link as on msgpipe's own GATT. Owns the bus
/// connection.
public final class BlueZCentralLink: Sendable {
    public let relay = RelayLink()
    private let bus: DBusConnection
    private let adapter: String
    private let confirmedWrites: Bool
    /// The task carrying the current connection (ends once that connection is down and disconnected).
    private let carrying = Mutex<Task<Void, Never>?>(nil)

    /// With `confirmedWrites` (plain formats) every packet is a Write Request the peer answers, so a send
    /// that returned was delivered to its ATT layer.
    public init(bus: DBusConnection, adapter: String, confirmedWrites: Bool = false) {
        self.bus = bus
        self.adapter = adapter
        self.confirmedWrites = confirmedWrites
    }

    /// Connects `target` (discovery, Device1.Connect with retries, the profile's characteristics) within
    /// `timeout` and carries that connection until it drops; returns the peer's description.
    public func connect(_ target: CentralTarget, profile: GATTServiceProfile, timeout: Duration) async throws(BlueZError) -> String {
        let connection = try await BlueZCentral.connect(
            bus: bus, adapter: adapter, target: target, profile: profile, timeout: timeout,
            confirmedWrites: confirmedWrites)
        let previous = carrying.withLock { $0 }
        let task = Task { [relay] in
            await previous?.value
            await relay.carry(connection.link)
            await connection.disconnect()
        }
        carrying.withLock { $0 = task }
        return "\(connection.peer)" + (connection.usesAcquiredDescriptors ? "" : " (WriteValue/StartNotify fallback)")
    }

    /// Closes the relay, disconnects the current connection, then the bus.
    public func close() async {
        await relay.close()
        await carrying.withLock { $0 }?.value
        bus.close()
    }
}
