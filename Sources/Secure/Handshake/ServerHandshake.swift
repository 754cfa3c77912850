public import Crypto

/// The responder's side of the handshake, without I/O: answer the ClientHello with
/// ``respond(to:)``, then check the ClientFinish with ``complete(clientFinish:)`` to get the session.
/// A server with pinned credentials accepts its one peer key in mode 2 or 3; a server with
/// ``init(identity:authorizedKeys:limits:ephemeral:)`` accepts any key of the set, in mode 3 only, and
/// tells which one in ``peer``.
public struct ServerHandshake: Sendable {
    private enum Policy: Sendable {
        case credentials(SecureCredentials)
        case authorized(IdentityKey, AuthorizedKeys)
    }

    private let policy: Policy
    private let ephemeral: Curve25519.KeyAgreement.PrivateKey
    private let limits: SecureLimits
    private var keys: SessionKeys?

    /// The client's key once ``respond(to:)`` checked it (identity modes); its name when it came from an
    /// ``AuthorizedKeys`` set. Authenticated only once ``complete(clientFinish:)`` returned.
    public private(set) var peer: AuthorizedKeys.Entry?

    /// Starts a handshake; `ephemeral` is fresh per connection (fixed only for test vectors).
    public init(
        credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        ephemeral: Curve25519.KeyAgreement.PrivateKey = .init()
    ) {
        policy = .credentials(credentials)
        self.ephemeral = ephemeral
        self.limits = limits
    }

    /// Starts a handshake that accepts any client whose key is in `authorizedKeys` (mode 3).
    public init(
        identity: IdentityKey, authorizedKeys: AuthorizedKeys, limits: SecureLimits = SecureLimits(),
        ephemeral: Curve25519.KeyAgreement.PrivateKey = .init()
    ) {
        policy = .authorized(identity, authorizedKeys)
        self.ephemeral = ephemeral
        self.limits = limits
    }

    /// The ServerHello answering `clientHello`. Throws for a malformed hello, another mode, or (identity
    /// modes) a client key we do not accept: answer with a ``HandshakeReject`` carrying
    /// ``SecureAlert/init(_:)`` of the error.
    public mutating func respond(to clientHello: [UInt8]) throws(SecureError) -> [UInt8] {
        let hello = try ClientHello(decoding: clientHello[...])
        let credentials = try resolve(hello, bytes: clientHello)
        var serverHello = ServerHello(
            mode: hello.mode, ephemeralPublicKey: Array(ephemeral.publicKey.rawRepresentation), confirmation: [])
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

    /// The credentials this hello is handshaken with: ours, or our identity and the client's announced key
    /// once it is found acceptable (and recorded in ``peer``).
    private mutating func resolve(_ hello: ClientHello, bytes: [UInt8]) throws(SecureError) -> SecureCredentials {
        switch (policy, hello.mode) {
        case let (.credentials(credentials), mode) where mode == credentials.mode:
            if case let .identity(_, pinned) = credentials { peer = AuthorizedKeys.Entry(name: nil, key: pinned) }
            return credentials
        case let (.credentials(.identity(identity, pinned)), .announcedIdentity):
            let announced = try announcedKey(hello, bytes: bytes, identity: identity)
            guard announced == pinned else {
                throw .notAuthenticated("the client's key \(announced.text) is not the pinned peer key")
            }
            peer = AuthorizedKeys.Entry(name: nil, key: pinned)
            return .identity(identity, peer: pinned)
        case let (.authorized(identity, authorized), .announcedIdentity):
            let announced = try announcedKey(hello, bytes: bytes, identity: identity)
            guard let entry = authorized.entry(for: announced) else {
                throw .notAuthenticated("the client's key \(announced.text) is not an authorized key")
            }
            peer = entry
            return .identity(identity, peer: announced)
        case let (.credentials(credentials), mode):
            throw .modeMismatch(local: credentials.mode, peer: mode)
        case let (.authorized, mode):
            throw .modeMismatch(local: .announcedIdentity, peer: mode)
        }
    }

    private func announcedKey(_ hello: ClientHello, bytes: [UInt8], identity: IdentityKey) throws(SecureError)
        -> PeerPublicKey
    {
        let peerEphemeral: Curve25519.KeyAgreement.PublicKey
        do {
            peerEphemeral = try .init(rawRepresentation: hello.ephemeralPublicKey)
        } catch {
            throw .handshakeFailed("the peer's ephemeral key is not an X25519 public key")
        }
        return try IdentityAnnouncement.open(
            hello.sealedIdentity, identity: identity, peerEphemeral: peerEphemeral,
            helloPrefix: Array(bytes.prefix(ClientHello.count)))
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
