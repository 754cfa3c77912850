public import Transport

/// A message opened by a ``SecureChannel``: the plaintext, and whether the peer waits for a response
/// (answer it with ``SecureChannel/respond(to:with:)``).
public struct SecureMessage: Sendable {
    public let plaintext: [UInt8]
    /// The underlying transport message (its id correlates the response).
    public let received: ReceivedMessage

    public var isRequest: Bool { received.isRequest }
}
