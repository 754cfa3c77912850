public import Transport

/// A message opened by a ``SecureChannel``: the plaintext, and whether the peer waits for a response
/// (answer it with ``SecureChannel/respond(to:with:)``).
public struct SecureMessage: Sendable {
    public let plaintext: [UInt8]
    /// The underlying transport message (its id correlates the response).
    public let received: ReceivedMessage
    /// The origin the sender sealed with the message (a queued message, ``SecureChannel/submit(_:origin:timeout:)``);
    /// nil for one sent without.
    public let origin: MessageOrigin?

    public init(plaintext: [UInt8], received: ReceivedMessage, origin: MessageOrigin? = nil) {
        self.plaintext = plaintext
        self.received = received
        self.origin = origin
    }

    public var isRequest: Bool { received.isRequest }
}
