import Crypto

/// An X25519 public key: the peer identity a side pins (`--peer-key`). Text form
/// `msgpipe-x25519-public:` + 64 hex digits; the bare hex digits are accepted too.
public struct PeerPublicKey: Sendable, Equatable {
    static let textPrefix = "msgpipe-x25519-public"

    let key: Curve25519.KeyAgreement.PublicKey

    init(_ key: Curve25519.KeyAgreement.PublicKey) {
        self.key = key
    }

    /// A public key from its 32 bytes.
    public init(bytes: [UInt8]) throws(SecureError) {
        do {
            key = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes)
        } catch {
            throw .invalidKey("an X25519 public key has \(KeyText.keySize) bytes, not \(bytes.count)")
        }
    }

    /// Parses the text form (or bare hex digits).
    public init(text: some StringProtocol) throws(SecureError) {
        try self.init(bytes: KeyText.parse(text, prefix: Self.textPrefix, bareHexAllowed: true))
    }

    /// The 32 key bytes.
    public var bytes: [UInt8] { Array(key.rawRepresentation) }

    /// The text form: `msgpipe-x25519-public:<64 hex digits>`.
    public var text: String { KeyText.format(prefix: Self.textPrefix, key.rawRepresentation) }

    public static func == (lhs: PeerPublicKey, rhs: PeerPublicKey) -> Bool { lhs.bytes == rhs.bytes }
}
