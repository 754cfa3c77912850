public import Backpressure
public import BLELink
public import GATT
public import Transport

/// The link to one peer, whichever backend carries it: msgpipe's own GATT over an ATT bearer (a UNIX socket
/// or the kernel's L2CAP ATT channel), or the descriptors bluetoothd hands out. Transport, Secure and
/// Exchange run over it without knowing the backend.
public enum PeerLink: Link {
    /// msgpipe's GATT client or server over an ATT bearer.
    case gatt(GATTLink)
    /// A characteristic pair acquired from bluetoothd (it runs the GATT server).
    case acquired(AcquiredLink)
    /// The central through bluetoothd: one connection after another on a relay.
    case bluezCentral(BlueZCentralLink)
    /// The central on the kernel backend with a channel allowed: the channel or GATT, per connection.
    case channel(ChannelCentralLink)
    /// A central's LE credit-based channel accepted by the peripheral (one connection).
    case stream(StreamLink)

    public var events: BoundedAsyncQueue<LinkEvent, Never> {
        switch self {
        case let .gatt(link): link.events
        case let .acquired(link): link.events
        case let .bluezCentral(link): link.relay.events
        case let .channel(link): link.relay.events
        case let .stream(link): link.events
        }
    }

    public func send(_ packet: [UInt8]) async throws {
        switch self {
        case let .gatt(link): try await link.send(packet)
        case let .acquired(link): try await link.send(packet)
        case let .bluezCentral(link): try await link.relay.send(packet)
        case let .channel(link): try await link.relay.send(packet)
        case let .stream(link): try await link.send(packet)
        }
    }

    public func close() async {
        switch self {
        case let .gatt(link): await link.close()
        case let .acquired(link): await link.close()
        case let .bluezCentral(link): await link.close()
        case let .channel(link): await link.close()
        case let .stream(link): await link.close()
        }
    }

    public func renewIncoming() async {
        switch self {
        case let .gatt(link): await link.renewIncoming()
        case let .acquired(link): await link.renewIncoming()
        case let .bluezCentral(link): await link.relay.renewIncoming()
        case let .channel(link): await link.relay.renewIncoming()
        case .stream: break
        }
    }

    /// Drops the current connection: the peer sees a disconnect; a central's link may connect again.
    public func disconnect() async {
        switch self {
        case let .gatt(link): await link.disconnect()
        case let .acquired(link): link.disconnect(reason: "dropped locally")
        case let .bluezCentral(link): await link.relay.dropConnection()
        case let .channel(link): await link.relay.dropConnection()
        case let .stream(link): await link.close()
        }
    }

    /// What the peer's info characteristic said (msgpipe GATT as central only; nil otherwise).
    public var peerInfo: MsgPipeServiceInfo? {
        switch self {
        case let .gatt(link): link.peerInfo
        case let .channel(link): link.peerInfo
        default: nil
        }
    }

    /// True when the data goes over an LE credit-based channel now (or on the last connection), false on GATT.
    public var usesChannel: Bool {
        switch self {
        case let .channel(link): link.usesChannel
        case let .bluezCentral(link): link.usesChannel
        case .stream: true
        default: false
        }
    }

    /// True when ``sendConfirmed(_:)`` waits for the peer's ATT acknowledgement (GATT), or for the channel
    /// to have handed everything to the controller (an L2CAP channel, `StreamLink.sendConfirmed(_:stall:)`).
    public var canConfirm: Bool {
        switch self {
        case let .gatt(link): link.canConfirm
        case let .channel(link): link.canConfirm
        case let .bluezCentral(link): link.usesChannel
        case .stream: true
        default: false
        }
    }

    /// Sends `packet` and, where the link can (``canConfirm``), waits until it was confirmed; elsewhere as
    /// ``send(_:)``.
    public func sendConfirmed(_ packet: [UInt8]) async throws {
        switch self {
        case let .gatt(link) where link.canConfirm: try await link.sendConfirmed(packet)
        case let .stream(link): try await link.sendConfirmed(packet)
        case let .channel(link) where link.canConfirm: try await link.sendConfirmed(packet)
        case let .bluezCentral(link) where link.usesChannel: try await link.sendConfirmed(packet)
        default: try await send(packet)
        }
    }
}
