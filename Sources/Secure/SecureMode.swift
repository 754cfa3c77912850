/// Which kind of key authenticates a handshake (the `mode` byte of ClientHello, PROTOCOL.md 6.2).
public enum SecureMode: UInt8, Sendable, Equatable, CustomStringConvertible {
    /// Both peers hold the same 32-byte pre-shared key.
    case preSharedKey = 1
    /// Each peer holds an X25519 identity key and pins the other's public key; the ClientHello does not say
    /// which key the client holds, so the server can check it against one pinned key only.
    case identity = 2
    /// As ``identity``, but the ClientHello carries the client's public key sealed to the server's identity,
    /// so a server can accept any key of a set (``AuthorizedKeys``) and tell which one connected.
    case announcedIdentity = 3

    public var description: String {
        switch self {
        case .preSharedKey: "pre-shared"
        case .identity: "X25519 identity"
        case .announcedIdentity: "X25519 identity (announced)"
        }
    }
}
