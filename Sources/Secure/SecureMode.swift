/// Which kind of key authenticates a handshake (the `mode` byte of ClientHello, PROTOCOL.md 6.2).
public enum SecureMode: UInt8, Sendable, Equatable, CustomStringConvertible {
    /// Both peers hold the same 32-byte pre-shared key.
    case preSharedKey = 1
    /// Each peer holds an X25519 identity key and pins the other's public key.
    case identity = 2

    public var description: String {
        switch self {
        case .preSharedKey: "pre-shared"
        case .identity: "X25519 identity"
        }
    }
}
