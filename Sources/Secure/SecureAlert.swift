/// Why a peer refused a handshake or a sealed message (the reason byte of a Reject or sealed alert).
public enum SecureAlert: UInt8, Sendable, Equatable, CustomStringConvertible {
    case malformed = 1
    case unsupportedVersion = 2
    case modeMismatch = 3
    case notAuthenticated = 4
    case replayed = 5
    case tampered = 6
    case tooLarge = 7
    case unexpected = 8

    /// The alert for an error found while opening or handshaking; nil for local failures.
    public init?(_ error: SecureError) {
        switch error {
        case .notAuthenticated: self = .notAuthenticated
        case .handshakeFailed, .malformedRecord: self = .malformed
        case .modeMismatch: self = .modeMismatch
        case .unsupportedVersion: self = .unsupportedVersion
        case .replayed, .outsideReplayWindow: self = .replayed
        case .tampered: self = .tampered
        case .messageTooLarge: self = .tooLarge
        case .counterExhausted, .refusedByPeer, .closedDuringHandshake, .invalidKey, .sessionForgotten: return nil
        }
    }

    public var description: String {
        switch self {
        case .malformed: "malformed message"
        case .unsupportedVersion: "unsupported protocol version"
        case .modeMismatch: "the peers use different kinds of key"
        case .notAuthenticated: "not authenticated"
        case .replayed: "replayed message"
        case .tampered: "tampered message"
        case .tooLarge: "message too large"
        case .unexpected: "unexpected message"
        }
    }
}
