import Backpressure
public import BLELink
import BlueZLink
public import GATT
public import SDBus
import Synchronization
public import Transport

/// The central's link through bluetoothd: a `RelayLink` that carries one `BlueZCentral` connection after
/// another, so a reconnect resumes Transport over the same link as on msgpipe's own GATT. Where the peer's
/// service publishes an LE credit-based channel (and the mode allows it, `LinkMode`), a connection carries
/// that channel instead: a kernel socket opened beside bluetoothd's connection, as a normal user (dynamic PSMs
/// need no privilege). Owns the bus connection.
///
/// ```swift
/// let link = BlueZCentralLink(bus: bus, adapter: "/org/bluez/hci0", mode: .auto)
/// let summary = try await link.connect(.name("kiosk"), profile: .msgpipe, timeout: .seconds(30))
/// let transport = Transport(link: link)
/// ```
public final class BlueZCentralLink: RelayCentralLink {
    private let carriage = RelayCarriage()
    public let mode: LinkMode
    private let bus: DBusConnection
    private let adapter: String
    private let confirmedWrites: Bool
    private let framed: Bool
    private let security: L2CAPSecurityLevel
    /// The channel carried now or last; nil when that connection is GATT.
    private let channel = Mutex<StreamLink?>(nil)

    /// With `confirmedWrites` (plain formats) every GATT packet is a Write Request the peer answers, so a
    /// send that returned was delivered to its ATT layer. `framed` false: a plain format, whose bytes a channel
    /// carries as they are (PROTOCOL.md 7.2). `security`: the level the channel is opened at.
    public init(
        bus: DBusConnection, adapter: String, confirmedWrites: Bool = false, mode: LinkMode = .gatt,
        framed: Bool = true, security: L2CAPSecurityLevel = .low
    ) {
        self.bus = bus
        self.adapter = adapter
        self.confirmedWrites = confirmedWrites
        self.mode = mode
        self.framed = framed
        self.security = security
    }

    public var relay: RelayLink { carriage.relay }

    /// `.l2cap` while the connection carried now (or the last one) is the channel, `.gatt` otherwise.
    public var carrier: Carrier { channel.withLock { $0 != nil } ? .l2cap : .gatt }
    /// nil: bluetoothd reads the peer's characteristics, this side does not read the info characteristic.
    public var peerInfo: MsgPipeServiceInfo? { nil }
    /// True on a channel (its drain confirms); on GATT a plain format's every packet is a Write Request
    /// already, so nothing more confirms one.
    public var canConfirm: Bool { carrier == .l2cap }

    /// Sends `packet` on the channel carried now and waits until the channel handed it to the controller
    /// (`StreamLink.sendConfirmed(_:stall:)`); call it after the packets before it were sent. On GATT every
    /// packet of a plain format is confirmed already (Write Requests): there it sends through the relay.
    public func sendConfirmed(_ packet: [UInt8]) async throws {
        if let channel = channel.withLock({ $0 }) {
            try await channel.sendConfirmed(packet)
        } else {
            try await relay.send(packet)
        }
    }

    /// Connects `target` (discovery, Device1.Connect with retries, the profile's characteristics) within
    /// `timeout`, opens the published channel unless the mode is `LinkMode.gatt`, and carries the channel, or
    /// GATT, until it drops. Returns the peer's description and what carries the data ("gatt" or the channel,
    /// and why). Throws what the connect throws, and in `LinkMode.l2cap`
    /// `MessagePipeError.channelUnavailable(_:)`.
    public func connect(_ target: CentralTarget, profile: GATTServiceProfile, timeout: Duration) async throws -> (peer: String, summary: String) {
        let deadline = ContinuousClock.now + timeout
        let connection = try await BlueZCentral.connect(
            bus: bus, adapter: adapter, target: target, profile: profile, timeout: timeout,
            confirmedWrites: confirmedWrites)
        var channel: StreamLink?
        var summary = mode == .gatt ? "gatt" : "gatt (no channel published)"
        if mode != .gatt, let psm = connection.channelPSM {
            do {
                channel = try await openChannel(psm, of: connection, within: max(.seconds(2), ContinuousClock.now.duration(to: deadline)))
                summary = "l2cap channel PSM 0x\(String(psm, radix: 16))"
            } catch {
                summary = "gatt (the channel failed: PSM 0x\(String(psm, radix: 16)): \(error))"
                if mode == .l2cap {
                    await connection.disconnect()
                    throw MessagePipeError.channelUnavailable("PSM 0x\(String(psm, radix: 16)): \(error)")
                }
            }
        } else if mode == .l2cap {
            await connection.disconnect()
            throw MessagePipeError.channelUnavailable("the peripheral publishes no channel PSM")
        }
        let carried: any Link = channel ?? connection.link
        self.channel.withLock { $0 = channel }
        carriage.carry(carried) { await connection.disconnect() }
        let peer = "\(connection.peer)" + (connection.usesAcquiredDescriptors ? "" : " (WriteValue/StartNotify fallback)")
        return (peer, summary)
    }

    /// The channel at `psm` on the connection's peer, from the adapter's address, as a ``StreamLink``.
    private func openChannel(_ psm: UInt16, of connection: BlueZCentral.Connection, within timeout: Duration) async throws -> StreamLink {
        guard let local = connection.adapterAddress else {
            throw LinkError.io("bluetoothd did not say the adapter's address")
        }
        let (peer, security, name) = (connection.peer, security, BlueZAdapter.name(path: adapter))
        let socket = try await BlockingCall.run { () throws(BluetoothError) in
            try L2CAPChannel.connect(from: local, adapterName: name, to: peer, psm: psm, timeout: timeout, security: security)
                .handOver()
        }
        let unit = L2CAPChannel.sendUnit(socket.fileDescriptor) ?? ATTOpcode.defaultMTU
        return try StreamLink(adopting: socket.fileDescriptor, sendUnit: unit, framed: framed)
    }

    /// Closes the relay, disconnects the current connection, then the bus.
    public func close() async {
        await carriage.close()
        bus.close()
    }
}
