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
    /// The session of the peer's sending side (PROTOCOL.md 3.9): with ``messageID`` it names the message
    /// uniquely for as long as that sender runs, across reconnects. 0 when unknown.
    public var senderSession: UInt64

    public init(
        messageID: UInt32, body: [UInt8], isRequest: Bool = false, correlationID: UInt32? = nil, senderSession: UInt64 = 0
    ) {
        self.messageID = messageID
        self.body = body
        self.isRequest = isRequest
        self.correlationID = correlationID
        self.senderSession = senderSession
    }

    /// Equal when the peer sent the same: id, body, kind and correlation (the session is not compared).
    public static func == (a: ReceivedMessage, b: ReceivedMessage) -> Bool {
        a.messageID == b.messageID && a.body == b.body && a.isRequest == b.isRequest && a.correlationID == b.correlationID
    }
}
