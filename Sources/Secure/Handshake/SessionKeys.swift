import Crypto
import Framing

/// The keys one handshake derives (PROTOCOL.md 6.3): a ChaCha20-Poly1305 key per direction and the two
/// key-confirmation codes, all bound to the transcript and to the PSK or both identities.
struct SessionKeys: Sendable {
    var initiatorToResponder: SymmetricKey
    var responderToInitiator: SymmetricKey
    /// HMAC-SHA256(k_confirm_server, "msgpipe server finished" || transcript hash).
    var responderConfirmation: [UInt8]
    /// HMAC-SHA256(k_confirm_client, "msgpipe client finished" || transcript hash).
    var initiatorConfirmation: [UInt8]

    static let pskInfo = Array("msgpipe secure v1 psk".utf8)
    static let identityInfo = Array("msgpipe secure v1 identity".utf8)

    /// Derives the keys from our ephemeral, the peer's ephemeral public key and the transcript
    /// (ClientHello followed by ServerHello without its confirmation).
    static func derive(
        credentials: SecureCredentials, role: SecureRole,
        ephemeral: Curve25519.KeyAgreement.PrivateKey, peerEphemeral: [UInt8], transcript: [UInt8]
    ) throws(SecureError) -> SessionKeys {
        let peerEphemeralKey: Curve25519.KeyAgreement.PublicKey
        do {
            peerEphemeralKey = try .init(rawRepresentation: peerEphemeral)
        } catch {
            throw .handshakeFailed("the peer's ephemeral key is not an X25519 public key")
        }
        var inputKeyMaterial = try agree(ephemeral, peerEphemeralKey)
        var info: [UInt8]
        switch credentials {
        case let .preSharedKey(key):
            inputKeyMaterial += key.bytes
            info = pskInfo
        case let .identity(identity, peer):
            switch role {
            case .initiator:
                inputKeyMaterial += try agree(ephemeral, peer.key)  // es
                inputKeyMaterial += try agree(identity.privateKey, peerEphemeralKey)  // se
                info = identityInfo + identity.publicKey.bytes + peer.bytes
            case .responder:
                inputKeyMaterial += try agree(identity.privateKey, peerEphemeralKey)  // es
                inputKeyMaterial += try agree(ephemeral, peer.key)  // se
                info = identityInfo + peer.bytes + identity.publicKey.bytes
            }
        }
        let transcriptHash = Array(SHA256.hash(data: transcript))
        let material = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKeyMaterial), salt: transcriptHash, info: info,
            outputByteCount: 128
        ).withUnsafeBytes { Array($0) }
        return SessionKeys(
            initiatorToResponder: SymmetricKey(data: material[0..<32]),
            responderToInitiator: SymmetricKey(data: material[32..<64]),
            responderConfirmation: confirmation(
                key: material[64..<96], label: "msgpipe server finished", transcriptHash: transcriptHash),
            initiatorConfirmation: confirmation(
                key: material[96..<128], label: "msgpipe client finished", transcriptHash: transcriptHash))
    }

    static func agree(
        _ privateKey: Curve25519.KeyAgreement.PrivateKey, _ publicKey: Curve25519.KeyAgreement.PublicKey
    ) throws(SecureError) -> [UInt8] {
        do {
            return try privateKey.sharedSecretFromKeyAgreement(with: publicKey).withUnsafeBytes { Array($0) }
        } catch {
            throw .handshakeFailed("X25519 agreement failed (a low-order public key)")
        }
    }

    private static func confirmation(key: ArraySlice<UInt8>, label: String, transcriptHash: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(
            for: Array(label.utf8) + transcriptHash, using: SymmetricKey(data: key)))
    }
}

/// Compares two byte strings in time that depends only on their lengths.
func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
    return difference == 0
}
