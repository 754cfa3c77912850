import Crypto

/// A peer's long-term X25519 key pair; text form `msgpipe-x25519-private:` + 64 hex digits
/// (`msgpipe keygen --x25519`). Its ``publicKey`` is what the other peer pins.
public struct IdentityKey: Sendable {
    static let textPrefix = "msgpipe-x25519-private"

    let privateKey: Curve25519.KeyAgreement.PrivateKey

    /// A new random identity.
    public init() {
        privateKey = Curve25519.KeyAgreement.PrivateKey()
    }

    /// An identity from its 32 private key bytes.
    public init(privateBytes: [UInt8]) throws(SecureError) {
        do {
            privateKey = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateBytes)
        } catch {
            throw .invalidKey("an X25519 private key has \(KeyText.keySize) bytes, not \(privateBytes.count)")
        }
    }

    /// Parses the text form (one line, as in an identity file).
    public init(text: some StringProtocol) throws(SecureError) {
        try self.init(privateBytes: KeyText.parse(text, prefix: Self.textPrefix))
    }

    /// The text form of the private key: `msgpipe-x25519-private:<64 hex digits>`. Keep it secret.
    public var text: String { KeyText.format(prefix: Self.textPrefix, privateKey.rawRepresentation) }

    /// The public half, to give to the peer.
    public var publicKey: PeerPublicKey { PeerPublicKey(privateKey.publicKey) }
}
