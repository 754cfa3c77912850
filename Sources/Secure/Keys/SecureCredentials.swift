/// What authenticates one side of a connection: a shared key, or our identity plus the peer's pinned key.
public enum SecureCredentials: Sendable {
    case preSharedKey(PreSharedKey)
    case identity(IdentityKey, peer: PeerPublicKey)

    /// The handshake mode these credentials use.
    public var mode: SecureMode {
        switch self {
        case .preSharedKey: .preSharedKey
        case .identity: .identity
        }
    }
}
