/// What one peer took of messages sent to several (``MessagePipe/send(count:toEach:over:options:window:deadline:body:onConnected:onAcknowledged:)``,
/// ``PipeServer/send(count:toCentrals:window:deadline:body:onAcknowledged:)``): how many it acknowledged, in
/// order, and what stopped it, if anything.
public struct PeerDelivery: Sendable {
    /// What stopped a peer's delivery.
    public enum Failure: Sendable {
        /// No pipe to the peer could be made (what `MessagePipe.connect(to:options:)` throws); nothing was sent.
        case connect(any Error)
        /// The windowed send stopped (``MessagePipe/WindowOutcome/Failure``).
        case send(MessagePipe.WindowOutcome.Failure)
    }

    /// The peer as the caller named it (a central: its `MessagePipe.peer`).
    public let peer: String
    /// Messages the peer acknowledged, in order, before any failure.
    public let acknowledged: Int
    /// nil: the peer acknowledged every message.
    public let failure: Failure?

    public init(peer: String, acknowledged: Int, failure: Failure?) {
        self.peer = peer
        self.acknowledged = acknowledged
        self.failure = failure
    }
}

/// How messages sent to several peers ended: one ``PeerDelivery`` per peer, in the order the peers were given
/// (centrals: in the order they subscribed).
///
/// ```swift
/// let outcome = await MessagePipe.send(count: 1, toEach: ["door", "hall"]) { _ in Array("open".utf8) }
/// if outcome.isPartial { print("missing:", outcome.failed.map(\.peer)) }
/// ```
public struct DeliveryOutcome: Sendable {
    public let deliveries: [PeerDelivery]

    public init(_ deliveries: [PeerDelivery]) { self.deliveries = deliveries }

    /// Every peer acknowledged every message.
    public var isComplete: Bool { deliveries.allSatisfy { $0.failure == nil } }
    /// Some peers acknowledged every message and some did not.
    public var isPartial: Bool { !isComplete && deliveries.contains { $0.failure == nil } }
    /// The peers that did not acknowledge every message, in order.
    public var failed: [PeerDelivery] { deliveries.filter { $0.failure != nil } }
}

/// Why ``PipeServer/send(count:toCentrals:window:deadline:body:onAcknowledged:)`` sent nothing.
public enum CentralsError: Error, Sendable, CustomStringConvertible {
    /// Serving failed before enough centrals subscribed: the server's ``PipeServer/failure``.
    case serverFailed(any Error)
    /// The server stopped before `expected` centrals subscribed; `subscribed` did.
    case tooFew(subscribed: Int, expected: Int)

    public var description: String {
        switch self {
        case let .serverFailed(error): "\(error)"
        case let .tooFew(subscribed, expected): "\(subscribed) of \(expected) centrals subscribed"
        }
    }
}
