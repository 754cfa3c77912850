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

extension PeerDelivery.Failure {
    /// What stopped a peer's delivery, for a caller that decides on it rather than prints it (msgpipe's exit
    /// codes follow it, docs/CLI.md).
    public enum Kind: Sendable, Equatable {
        /// No connection, or the link failed and reconnecting did not bring it back.
        case link
        /// A message was not acknowledged before the deadline, the peer stopped answering, or it forgot the
        /// end-to-end session (``MessagePipeError/peerSessionReset(maybeDelivered:)``).
        case notAcknowledged
        /// The peer refused for good: too large, another format, rejected, unusable keys.
        case refused
        /// End to end: the peer does not accept our key, is not the pinned peer, or wants keys we lack.
        case notAuthenticated
        /// A message the format cannot carry (or a packet size too small for it).
        case unsendable
        /// The caller's `body` threw: reading a message failed.
        case body
    }

    /// The ``Kind`` of this failure: the same error means another kind while connecting (a pipe error there is a
    /// refusal, nothing was sent) than while sending.
    ///
    /// ```swift
    /// if outcome.failed.contains(where: { $0.failure?.kind == .notAuthenticated }) { rotateKeys() }
    /// ```
    public var kind: Kind {
        switch self {
        case .connect(MessagePipeError.notAuthenticated): .notAuthenticated
        case .connect(is MessagePipeError): .refused
        case let .connect(error as SecureError): Self.kind(error)
        case .connect: .link
        case .send(.body): .body
        case let .send(.send(_, error)): Self.kind(sending: error)
        }
    }

    /// The kind of a failed send's error.
    static func kind(sending error: any Error) -> Kind {
        switch error {
        case let error as TransportError:
            switch error {
            case .deadlineExceeded, .retriesExhausted, .linkStalled, .responseTimedOut: .notAcknowledged
            case .rejectedByPeer(_, .notAuthenticated): .notAuthenticated
            case .rejectedByPeer, .messageTooLarge: .refused
            case .packetSizeTooSmall: .unsendable
            default: .link
            }
        case let error as SecureError: kind(error)
        case MessagePipeError.notAuthenticated: .notAuthenticated
        case MessagePipeError.messageTooLarge, MessagePipeError.formatMismatch, MessagePipeError.keysUnusable: .refused
        // The peer forgot the secure session: the message may have been kept, or not; it was not acknowledged.
        case MessagePipeError.timedOut, MessagePipeError.peerSessionReset: .notAcknowledged
        case is FramingError: .unsendable
        default: .link
        }
    }

    static func kind(_ error: SecureError) -> Kind {
        switch error {
        case .notAuthenticated, .modeMismatch, .refusedByPeer(.notAuthenticated), .refusedByPeer(.modeMismatch): .notAuthenticated
        case .closedDuringHandshake: .link
        default: .refused
        }
    }
}
