public import Backpressure
public import BluetoothCore
public import GATT
public import Transport

/// The link to one peer, whichever backend carries it; Transport, Secure and Exchange run over it unchanged.
/// A new backend adds a type that conforms. Events come in Backpressure's one bounded queue.
///
/// ```swift
/// let link = try await connector.makeLink()
/// try await connector.connect(link)
/// let transport = Transport(link: link)
/// ```
public protocol PipeLink: Link where Events == BoundedAsyncQueue<LinkEvent, Never> {
    /// What carries the data on the current connection (or the last one).
    var carrier: Carrier { get }

    /// What the peer's info characteristic said at the last connect; nil where this side did not read it
    /// (a peripheral, a central through bluetoothd).
    var peerInfo: MsgPipeServiceInfo? { get }

    /// True when ``PipeLink/sendConfirmed(_:)`` confirms on the current connection: the peer's ATT layer
    /// answered (a GATT Write Request or indication), or an L2CAP channel handed every byte to the controller.
    var canConfirm: Bool { get }

    /// Sends `packet` and, where the link can (``PipeLink/canConfirm``), returns only once it was confirmed;
    /// elsewhere it is `send(_:)`. Call it after the packets before it were sent. Throws what `send` throws,
    /// and `LinkError.io` when a channel's queue stopped draining.
    func sendConfirmed(_ packet: [UInt8]) async throws

    /// Drops the current connection: the peer sees a disconnect. A central's link may connect again; a
    /// peripheral's link of one connection ends.
    func disconnect() async

    /// The LE PHYs the current connection transmits and receives on, read now; nil where the backend does
    /// not tell them (bluetoothd, a UNIX socket, a test link) or no connection is up. A controller may change
    /// them while the link is up, so read it when the value matters (a benchmark: after its transfer).
    var phy: LinkPHY? { get }
}

extension PipeLink {
    /// nil: a backend that cannot read its connection's PHYs leaves it out.
    public var phy: LinkPHY? { nil }
}

/// What carries a pipe's data now: GATT (writes and notifications) or an LE credit-based L2CAP channel
/// (PROTOCOL.md 5.9). The user's choice between them is ``LinkMode``; `Carrier` is what a connection ended up
/// on. Its raw value is what the CLI prints and `--json` reports.
public enum Carrier: String, Sendable, CaseIterable {
    case gatt
    case l2cap
}
