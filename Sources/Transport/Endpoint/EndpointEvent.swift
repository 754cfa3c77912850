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
    /// A message in flight got no acknowledgement across ``Sender/renewAfterSilentTimeouts`` retransmission
    /// timeouts in a row while the connection stayed up: the way the peer's packets come in may be broken
    /// (the driver asks the link to renew it, ``Link/renewIncoming()``).
    case peerSilent
}
