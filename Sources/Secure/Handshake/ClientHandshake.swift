public import Crypto

/// The initiator's side of the handshake, without I/O: send ``hello``, pass the response to
/// ``finish(serverHello:)``, send its ClientFinish, then seal and open with the returned session.
public struct ClientHandshake: Sendable {
    private let credentials: SecureCredentials
    private let ephemeral: Curve25519.KeyAgreement.PrivateKey
    private let limits: SecureLimits

    /// The ClientHello to send as a request.
    public let hello: [UInt8]

    /// Starts a handshake; `ephemeral` is fresh per connection (fixed only for test vectors).
    public init(
        credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        ephemeral: Curve25519.KeyAgreement.PrivateKey = .init()
    ) {
        self.credentials = credentials
        self.ephemeral = ephemeral
        self.limits = limits
        var hello: [UInt8] = []
        ClientHello(mode: credentials.mode, ephemeralPublicKey: Array(ephemeral.publicKey.rawRepresentation))
            .encode(into: &hello)
        self.hello = hello
    }

    /// Checks the server's key confirmation; returns the ClientFinish to send and the session.
    /// Throws ``SecureError/notAuthenticated(_:)`` when the server holds another key.
    public func finish(serverHello bytes: [UInt8]) throws(SecureError) -> (finish: [UInt8], session: SecureSession) {
        let serverHello = try ServerHello(decoding: bytes[...])
        guard serverHello.mode == credentials.mode else {
            throw .modeMismatch(local: credentials.mode, peer: serverHello.mode)
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
