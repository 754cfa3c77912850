/// What a ``TransportEndpoint`` reports to its driver (see ``TransportEndpoint/pollEvent()``).
public enum EndpointEvent: Sendable, Equatable {
    /// The peer acknowledged the whole message (for a request: the response follows as `responseReceived`).
    case sendCompleted(SubmissionID, messageID: UInt32)
    /// The message (or request) failed for good.
    case sendFailed(SubmissionID, TransportError)
    /// The response to a request arrived.
    case responseReceived(SubmissionID, ReceivedMessage)
    /// A received message could not be delivered (e.g. it did not inflate); the peer was told.
    case receiveFailed(TransportError)
    /// A delivered message is waiting in ``TransportEndpoint/takeMessage()``.
    case messageAvailable
    /// Retransmission timeouts keep firing on a connection with nothing heard from the peer (reported at every
    /// second one since the last acknowledgement): the way the peer's packets come in may be broken while the
    /// connection stays up (the driver asks the link to renew it, ``Link/renewIncoming()``).
    case peerSilent
    /// The peer's hello named another sender session than the one this side received from before: the peer is a
    /// new process, or it forgot this side's session (a restart, an expired resume window) while this side resumed
    /// its own. What the peer held for this side is gone, e.g. an end-to-end session layered above (PROTOCOL.md 6.8).
    case peerSessionChanged(previous: UInt64, current: UInt64)
}
