public import Crypto

/// The initiator's side of the handshake, without I/O: send ``hello``, pass the response to
/// ``finish(serverHello:)``, send its ClientFinish, then seal and open with the returned session.
public struct ClientHandshake: Sendable {
    private let credentials: SecureCredentials
    private let ephemeral: Curve25519.KeyAgreement.PrivateKey
    private let limits: SecureLimits
    /// The mode the ClientHello names (and the ServerHello must echo).
    public let mode: SecureMode

    /// The ClientHello to send as a request.
    public let hello: [UInt8]

    /// Starts a handshake; `ephemeral` is fresh per connection (fixed only for test vectors). With identity
    /// credentials the hello announces our public key, sealed to the pinned server key (mode 3), so a server
    /// that accepts a set of keys can tell which is ours; `announcesIdentity: false` sends a mode-2 hello,
    /// which only a server that pinned our key accepts.
    public init(
        credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        ephemeral: Curve25519.KeyAgreement.PrivateKey = .init(), announcesIdentity: Bool = true
    ) {
        self.credentials = credentials
        self.ephemeral = ephemeral
        self.limits = limits
        let ephemeralPublic = Array(ephemeral.publicKey.rawRepresentation)
        var hello: [UInt8] = []
        switch credentials {
        case let .identity(identity, peer) where announcesIdentity:
            mode = .announcedIdentity
            ClientHello(mode: mode, ephemeralPublicKey: ephemeralPublic).encode(into: &hello)
            // Sealing fails only for a low-order pinned key; the hello then goes out without an identity and
            // the server refuses it as malformed, which is the error such a key deserves.
            hello += (try? IdentityAnnouncement.seal(
                identity.publicKey, ephemeral: ephemeral, server: peer, helloPrefix: hello)) ?? []
        default:
            mode = credentials.mode
            ClientHello(mode: mode, ephemeralPublicKey: ephemeralPublic).encode(into: &hello)
        }
        self.hello = hello
    }

    /// Checks the server's key confirmation; returns the ClientFinish to send and the session.
    /// Throws ``SecureError/notAuthenticated(_:)`` when the server holds another key.
    public func finish(serverHello bytes: [UInt8]) throws(SecureError) -> (finish: [UInt8], session: SecureSession) {
        let serverHello = try ServerHello(decoding: bytes[...])
        guard serverHello.mode == mode else {
            throw .modeMismatch(local: mode, peer: serverHello.mode)
        }
        var transcript = hello
        serverHello.encodeUnconfirmed(into: &transcript)
        let keys = try SessionKeys.derive(
            credentials: credentials, role: .initiator, ephemeral: ephemeral,
            peerEphemeral: serverHello.ephemeralPublicKey, transcript: transcript)
        guard constantTimeEqual(keys.responderConfirmation, serverHello.confirmation) else {
            throw .notAuthenticated(
                credentials.mode == .preSharedKey
                    ? "the server does not hold our pre-shared key"
                    : "the server's identity is not the pinned peer key, or it did not pin ours")
        }
        var finish: [UInt8] = []
        ClientFinish(confirmation: keys.initiatorConfirmation).encode(into: &finish)
        return (finish, SecureSession(role: .initiator, keys: keys, limits: limits))
    }
}
