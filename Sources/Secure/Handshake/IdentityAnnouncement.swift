import Crypto

/// How a mode-3 ClientHello carries the client's static public key (PROTOCOL.md 6.2): sealed with
/// ChaCha20-Poly1305 under a key only the holder of the server's identity can derive, so a listener on the
/// air learns nothing about which phone connects.
///
///     k    = HKDF-SHA256(X25519(e_c, S_s), salt = SHA-256(hello35), info = "msgpipe secure v1 announce", 32)
///     sealed_identity = ChaCha20-Poly1305(k, nonce = 12 zero bytes, AAD = hello35, S_c.public)   (32 + 16 bytes)
///
/// `hello35` is the ClientHello's first 35 bytes (`01 01 03 e_c`). The nonce is fixed because `k` is fresh
/// per handshake (the client's ephemeral is).
enum IdentityAnnouncement {
    static let sealedSize = SecureWire.keySize + 16
    static let info = Array("msgpipe secure v1 announce".utf8)

    /// The client's public key sealed to `server` (run by the initiator).
    static func seal(
        _ identity: PeerPublicKey, ephemeral: Curve25519.KeyAgreement.PrivateKey, server: PeerPublicKey,
        helloPrefix: [UInt8]
    ) throws(SecureError) -> [UInt8] {
        let key = try self.key(SessionKeys.agree(ephemeral, server.key), helloPrefix: helloPrefix)
        do {
            let box = try ChaChaPoly.seal(
                identity.bytes, using: key, nonce: try ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)),
                authenticating: helloPrefix)
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw .handshakeFailed("sealing our identity failed: \(error)")  // not reachable with a 12-byte nonce
        }
    }

    /// The client's public key from `sealed` (run by the responder). Throws
    /// ``SecureError/notAuthenticated(_:)`` when it was not sealed to `identity` (the client pinned another
    /// server key) or was changed on the way.
    static func open(
        _ sealed: [UInt8], identity: IdentityKey, peerEphemeral: Curve25519.KeyAgreement.PublicKey,
        helloPrefix: [UInt8]
    ) throws(SecureError) -> PeerPublicKey {
        let key = try self.key(SessionKeys.agree(identity.privateKey, peerEphemeral), helloPrefix: helloPrefix)
        let bytes: [UInt8]
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: [UInt8](repeating: 0, count: 12)),
                ciphertext: sealed.prefix(SecureWire.keySize), tag: sealed.suffix(16))
            bytes = Array(try ChaChaPoly.open(box, using: key, authenticating: helloPrefix))
        } catch {
            throw .notAuthenticated("the client's identity is not sealed to our key (it pinned another server key)")
        }
        return try PeerPublicKey(bytes: bytes)
    }

    private static func key(_ shared: [UInt8], helloPrefix: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: shared), salt: Array(SHA256.hash(data: helloPrefix)), info: info,
            outputByteCount: 32)
    }
}
