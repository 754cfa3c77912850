/// A bidirectional packet link: the abstraction every bearer implements (in-memory pairs, the BLE air-time
/// simulator, GATT over a UNIX or L2CAP socket).
///
/// A packet is one unit the bearer delivers whole, at most ``LinkEvent/connected(maximumPacketSize:)`` bytes
/// (ATT_MTU - 3 on GATT). One `Link` value stands for the association with one peer across reconnects:
/// after `.disconnected` the same link may report `.connected` again, which is how Transport resumes.
public protocol Link: Sendable {
    /// What the peer produced, in the order it happened: connection changes and received packets.
    ///
    /// Single consumer. The sequence is backpressured: while nobody iterates, the link stops reading and the
    /// peer's sends eventually suspend; nothing is dropped. It finishes when the link is closed for good.
    associatedtype Events: AsyncSequence<LinkEvent, Never> & Sendable
    var events: Events { get }

    /// Sends one packet, suspending while the bearer is not ready ("queue full") until it is.
    ///
    /// Throws ``LinkError/packetTooLarge(size:limit:)`` for a packet over the current maximum,
    /// ``LinkError/notConnected`` while disconnected, ``LinkError/disconnected(reason:)`` when the connection
    /// drops before the packet was handed to the bearer, and `CancellationError` if the task is cancelled
    /// while waiting (the packet was then not sent).
    func send(_ packet: [UInt8]) async throws

    /// Closes the link for good: pending and later sends throw ``LinkError/closed``, `events` finishes.
    func close() async

    /// Transport heard nothing from the peer across several retransmission timeouts while the connection
    /// stayed up: the bearer may repair the way the peer's packets come in, without dropping the connection
    /// (a GATT central subscribes to notifications again: a peripheral's bluetoothd can lose a subscription,
    /// BlueZ issue #1452). The default does nothing.
    func renewIncoming() async
}

extension Link {
    public func renewIncoming() async {}
}

/// Something that happened on a ``Link``.
public enum LinkEvent: Sendable, Equatable {
    /// A connection is up; packets may now be sent, each at most `maximumPacketSize` bytes.
    case connected(maximumPacketSize: Int)
    /// The maximum packet size changed on the live connection (an ATT MTU exchange).
    case maximumPacketSizeChanged(Int)
    /// One packet from the peer, whole.
    case packet([UInt8])
    /// The connection dropped; a later `.connected` may follow.
    case disconnected(reason: String)
}

/// Why a ``Link`` operation failed.
public enum LinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The packet is larger than the link carries now.
    case packetTooLarge(size: Int, limit: Int)
    /// No connection is up to send on.
    case notConnected
    /// The connection dropped while the operation ran.
    case disconnected(reason: String)
    /// The link was closed.
    case closed
    /// The operating system or the peer's stack failed the operation.
    case io(String)
    /// The caller asked for what this link cannot do (a programming error, not a fault of the link or peer).
    case misuse(String)

    public var description: String {
        switch self {
        case let .packetTooLarge(size, limit): "packet of \(size) bytes exceeds the link's limit of \(limit)"
        case .notConnected: "the link is not connected"
        case let .disconnected(reason): "the link disconnected: \(reason)"
        case .closed: "the link is closed"
        case let .io(message): "link I/O error: \(message)"
        case let .misuse(message): "link misused: \(message)"
        }
    }
}
