/// A message delivered by the peer, whole and intact.
public struct ReceivedMessage: Sendable, Equatable {
    /// The peer's message id (unique per link; a response names it as correlation id).
    public var messageID: UInt32
    /// The body as the peer's application sent it (inflated if it travelled deflated).
    public var body: [UInt8]
    /// True when the peer expects a response (``MessageKind/response(to:)`` with this ``messageID``).
    public var isRequest: Bool
    /// For a response: the message id of the request it answers.
    public var correlationID: UInt32?

    public init(messageID: UInt32, body: [UInt8], isRequest: Bool = false, correlationID: UInt32? = nil) {
        self.messageID = messageID
        self.body = body
        self.isRequest = isRequest
        self.correlationID = correlationID
    }
}
