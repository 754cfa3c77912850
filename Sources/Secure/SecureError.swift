/// Why a secure handshake, seal or open failed. The description is printed by the CLI as is.
public enum SecureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer does not hold the key we expect (wrong pre-shared key, or an unpinned identity).
    case notAuthenticated(String)
    /// A handshake message was malformed or came out of order.
    case handshakeFailed(String)
    /// The peers were configured with different kinds of key.
    case modeMismatch(local: SecureMode, peer: SecureMode)
    /// The peer speaks another version of the secure protocol.
    case unsupportedVersion(UInt8)
    /// A sealed message with this counter was already accepted (replay).
    case replayed(counter: UInt64)
    /// A sealed message older than the replay window (a replay or a reorder beyond the window).
    case outsideReplayWindow(counter: UInt64, highest: UInt64)
    /// A sealed message failed authentication: it was changed, or sealed under another key.
    case tampered(counter: UInt64)
    /// A sealed record is malformed (too short, unknown type).
    case malformedRecord(String)
    /// A message is larger than the configured limit.
    case messageTooLarge(size: Int, limit: Int)
    /// The send counter reached its limit; open a new connection (a new session key).
    case counterExhausted
    /// The peer refused our message with an authenticated alert, or during the handshake.
    case refusedByPeer(SecureAlert)
    /// The connection ended before the handshake finished.
    case closedDuringHandshake
    /// A key file or key text is not in the documented format.
    case invalidKey(String)
    /// As initiator: the peer refused a message sealed under a secure session it no longer holds (it restarted, or
    /// forgot our session, while our Transport session resumed). `maybeDelivered`: the message was sent before we
    /// learned it, so the peer may have taken it before it forgot. Never sent again by the channel.
    case sessionForgotten(maybeDelivered: Bool)

    public var description: String {
        switch self {
        case let .notAuthenticated(why): "not authenticated: \(why)"
        case let .handshakeFailed(why): "secure handshake failed: \(why)"
        case let .modeMismatch(local, peer):
            "secure handshake failed: we use \(local) keys, the peer uses \(peer) keys"
        case let .unsupportedVersion(version): "secure handshake failed: unsupported protocol version \(version)"
        case let .replayed(counter): "sealed message \(counter) rejected: replayed"
        case let .outsideReplayWindow(counter, highest):
            "sealed message \(counter) rejected: older than the replay window (highest accepted \(highest))"
        case let .tampered(counter): "sealed message \(counter) rejected: authentication failed (tampered)"
        case let .malformedRecord(why): "sealed message rejected: \(why)"
        case let .messageTooLarge(size, limit): "message of \(size) bytes exceeds the secure limit of \(limit)"
        case .counterExhausted: "the session's message counter is exhausted; reconnect for a new session key"
        case let .refusedByPeer(alert): "the peer refused the message: \(alert)"
        case .closedDuringHandshake: "the connection closed during the secure handshake"
        case let .invalidKey(why): "invalid key: \(why)"
        case let .sessionForgotten(maybeDelivered):
            "the peer forgot the secure session (it restarted) and refused the message"
                + (maybeDelivered ? "; it may have taken it before" : "; it never took it")
        }
    }
}
