/// Why a Transport operation failed.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message was not acknowledged within its deadline.
    case deadlineExceeded(messageID: UInt32?)
    /// The peer stopped answering: `retries` retransmission timeouts passed without progress.
    case retriesExhausted(messageID: UInt32, retries: Int)
    /// The link took no packet across `timeouts` retransmission timeouts in a row while it stayed connected (a
    /// peer that never reads its notifications or grants no credits).
    case linkStalled(timeouts: Int)
    /// The message is larger than the configured maximum.
    case messageTooLarge(size: Int, limit: Int)
    /// The endpoint's send queue is full (check ``TransportEndpoint/canSubmit`` first).
    case sendQueueFull(limit: Int)
    /// The peer refused the message for good.
    case rejectedByPeer(messageID: UInt32, reason: RejectionReason)
    /// The peer had already given this id up in this session (an earlier send of it was cancelled or
    /// abandoned): it did not take the message. A resumed sender sends it again in a new session.
    case abandonedAtPeer(messageID: UInt32)
    /// A received deflated message did not inflate within the maximum message size (corrupt or a zip bomb).
    case inflateFailed(messageID: UInt32, limit: Int)
    /// Deflating an outgoing message failed inside zlib.
    case deflateFailed(code: Int32)
    /// No response to the request arrived before its deadline.
    case responseTimedOut(requestID: UInt32)
    /// The send was cancelled by the caller before the peer acknowledged it.
    case cancelled
    /// The transport is closed.
    case closed
    /// The link reported a failure.
    case link(LinkError)
    /// The link's packets are smaller than Transport's minimum.
    case packetSizeTooSmall(size: Int, minimum: Int)
    /// The request handler failed; carries its description.
    case handlerFailed(String)
    /// A partial received message was dropped because its sender's session ended (a new sender process
    /// took over the link, PROTOCOL.md 3.9); that sender never saw it acknowledged.
    case senderSessionEnded(messageID: UInt32, length: Int)

    public var description: String {
        switch self {
        case let .deadlineExceeded(id):
            "message \(id.map(String.init) ?? "(not started)") was not acknowledged before its deadline"
        case let .retriesExhausted(id, retries):
            "message \(id) failed: no progress after \(retries) retransmission timeouts"
        case let .linkStalled(timeouts):
            "the link took no packet across \(timeouts) retransmission timeouts: the peer reads nothing"
        case let .messageTooLarge(size, limit): "message of \(size) bytes exceeds the maximum of \(limit)"
        case let .sendQueueFull(limit): "the send queue is full (\(limit) messages)"
        case let .rejectedByPeer(id, reason):
            "the peer rejected message \(id): \(reason.explanation)"
        case let .inflateFailed(id, limit):
            "message \(id) did not inflate within \(limit) bytes (corrupt or a zip bomb)"
        case let .deflateFailed(code): "zlib deflate failed with code \(code)"
        case let .responseTimedOut(id): "no response to request \(id) before its deadline"
        case let .abandonedAtPeer(id): "the peer had already given up message \(id) of this session; it did not take it"
        case .cancelled: "the send was cancelled"
        case .closed: "the transport is closed"
        case let .link(error): error.description
        case let .packetSizeTooSmall(size, minimum):
            "the link's packet size \(size) is below Transport's minimum of \(minimum)"
        case let .handlerFailed(message): "the request handler failed: \(message)"
        case let .senderSessionEnded(id, length):
            "partial message \(id) (\(length) bytes announced) dropped: its sender's session ended before it was complete"
        }
    }
}

extension RejectionReason {
    /// Why, in a few words.
    public var explanation: String {
        switch self {
        case .tooLarge: "too large"
        case .inflateFailed: "it did not inflate"
        case .notAuthenticated: "the sender is not authenticated (the peer wants end-to-end keys)"
        }
    }
}
