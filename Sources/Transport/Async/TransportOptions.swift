/// Settings of a ``Transport``: the protocol limits plus request behaviour.
public struct TransportOptions: Sendable {
    /// Limits and timings of the underlying ``TransportEndpoint``.
    public var endpoint = EndpointConfiguration()
    /// Requests go out one at a time, each after the previous one's response (the seeds' command queue).
    public var sequentialRequests = false
    /// The sending side goes on with this session and these ids (a sender that outlives its process);
    /// nil: a new random session, ids from 1.
    public var senderSession: SenderSession?

    public init(endpoint: EndpointConfiguration = EndpointConfiguration(), sequentialRequests: Bool = false) {
        self.endpoint = endpoint
        self.sequentialRequests = sequentialRequests
    }
}
