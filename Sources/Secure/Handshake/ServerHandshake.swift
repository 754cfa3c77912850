public import Crypto

/// The responder's side of the handshake, without I/O: answer the ClientHello with
/// ``respond(to:)``, then check the ClientFinish with ``complete(clientFinish:)`` to get the session.
public struct ServerHandshake: Sendable {
    private let credentials: SecureCredentials
    private let ephemeral: Curve25519.KeyAgreement.PrivateKey
    private let limits: SecureLimits
    private var keys: SessionKeys?

    /// Starts a handshake; `ephemeral` is fresh per connection (fixed only for test vectors).
    public init(
        credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        ephemeral: Curve25519.KeyAgreement.PrivateKey = .init()
    ) {
        self.credentials = credentials
        self.ephemeral = ephemeral
        self.limits = limits
    }

    /// The ServerHello answering `clientHello`. Throws for a malformed hello or another mode
    /// (answer with a ``HandshakeReject`` carrying ``SecureAlert/init(_:)`` of the error).
    public mutating func respond(to clientHello: [UInt8]) throws(SecureError) -> [UInt8] {
        let hello = try ClientHello(decoding: clientHello[...])
        guard hello.mode == credentials.mode else {
            throw .modeMismatch(local: credentials.mode, peer: hello.mode)
        }
        var serverHello = ServerHello(
            mode: credentials.mode, ephemeralPublicKey: Array(ephemeral.publicKey.rawRepresentation),
            confirmation: [])
        var transcript = clientHello
        serverHello.encodeUnconfirmed(into: &transcript)
        let keys = try SessionKeys.derive(
            credentials: credentials, role: .responder, ephemeral: ephemeral,
            peerEphemeral: hello.ephemeralPublicKey, transcript: transcript)
        self.keys = keys
        serverHello.confirmation = keys.responderConfirmation
        var out: [UInt8] = []
        serverHello.encode(into: &out)
        return out
    }

    /// Checks the client's key confirmation and returns the session. Throws
    /// ``SecureError/notAuthenticated(_:)`` when the client holds another key (or reports that we do).
    public func complete(clientFinish bytes: [UInt8]) throws(SecureError) -> SecureSession {
        guard let keys else { throw .handshakeFailed("ClientFinish before ClientHello") }
        let finish: ClientFinish
        do {
            finish = try ClientFinish(decoding: bytes[...])
        } catch .refusedByPeer(.notAuthenticated) {
            throw .notAuthenticated("the client does not accept our key")
        }
        guard constantTimeEqual(keys.initiatorConfirmation, finish.confirmation) else {
            throw .notAuthenticated("the client's key confirmation does not match")
        }
        return SecureSession(role: .responder, keys: keys, limits: limits)
    }
}
