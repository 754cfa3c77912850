public import Exchange
public import Secure
import Synchronization
import Transport

/// End-to-end keys for a pipe (PROTOCOL.md 6): the peers run Secure's handshake on each new Transport session
/// and seal every message, so only a peer holding the right key gets a pipe and a message that does not open
/// is never delivered nor acknowledged. A session that resumes after a drop keeps its keys: no new handshake,
/// nothing repeated. msgpipe format only.
///
/// ```swift
/// var options = MessagePipe.Options()
/// let identity = try KeyFiles.identity(at: "/etc/msgpipe/identity")
/// options.keys = .authorized(identity, try AuthorizedKeyring(path: "/etc/msgpipe/authorized_keys"))
/// let server = try await MessagePipe.advertise(name: "till", options: options)
/// for await phone in server.centrals {
///     Task { for await message in phone.messages { print(message.sender?.label ?? "?", message.bytes.count) } }
/// }
/// ```
public enum PipeKeys: Sendable {
    /// A pre-shared key (both sides), or our identity and the peer's pinned public key (a central; or a
    /// peripheral that serves that one peer).
    case credentials(SecureCredentials)
    /// A peripheral accepting any central whose key the keyring holds now; the keyring's reload revokes keys
    /// and closes their pipes. A central cannot use it.
    case authorized(IdentityKey, AuthorizedKeyring)

    /// The peer this side pins, when it pins one.
    var pinnedPeer: AuthorizedKeys.Entry? {
        if case let .credentials(.identity(_, peer)) = self { return AuthorizedKeys.Entry(name: nil, key: peer) }
        return nil
    }
}

extension MessagePipe {
    /// The secure side of a keyed pipe: its channel, and what to do when the pipe ends.
    struct Secured: Sendable {
        let channel: SecureChannel
        /// The authenticated peer (its name from the authorized keys), or the pinned key; nil with a
        /// pre-shared key.
        let peer: AuthorizedKeys.Entry?
        /// Messages are accepted as they are read (the application did not ask to hold acknowledgements).
        let acceptsOnRead: Bool
        /// Told why a message did not open (the pipe closes after it).
        let onRejected: @Sendable (SecureError) -> Void
        let onEnd: @Sendable () -> Void
        /// The first message that did not open, once one did not.
        let rejection = RejectionRecord()
    }

    /// The first rejection a keyed pipe saw.
    final class RejectionRecord: Sendable {
        private let first = Mutex<SecureError?>(nil)

        func record(_ error: SecureError) { first.withLock { if $0 == nil { $0 = error } } }
        var error: SecureError? { first.withLock { $0 } }
    }

    /// Runs the initiator's handshake on `transport` within `timeout`. Throws
    /// ``MessagePipeError/notAuthenticated(_:)`` when the peer refused our key or holds another one.
    static func initiate(
        _ keys: PipeKeys, over transport: Transport, options: Options
    ) async throws -> Secured {
        guard case let .credentials(credentials) = keys else {
            throw MessagePipeError.keysUnusable("authorized keys accept centrals: a central pins its peer's key")
        }
        let channel: SecureChannel
        do {
            channel = try await SecureChannel.initiate(
                over: transport, credentials: credentials, limits: options.secureLimits, timeout: options.handshakeTimeout,
                logger: options.logger)
        } catch let error as SecureError {
            throw MessagePipeError(refusal: error) ?? error
        }
        return Secured(
            channel: channel, peer: keys.pinnedPeer, acceptsOnRead: !options.holdsAcknowledgements,
            onRejected: options.rejectionNote(peer: "the peripheral"), onEnd: {})
    }

    /// Runs the responder's handshake on `transport` within the options' handshake timeout.
    static func accept(
        _ keys: PipeKeys, over transport: Transport, peer: String, options: Options
    ) async throws -> Secured {
        let (acceptsOnRead, onRejected) = (!options.holdsAcknowledgements, options.rejectionNote(peer: peer))
        return try await withHandshakeDeadline(options.handshakeTimeout, closing: transport) {
            switch keys {
            case let .credentials(credentials):
                let channel = try await SecureChannel.accept(
                    over: transport, credentials: credentials, limits: options.secureLimits, logger: options.logger)
                return Secured(
                    channel: channel, peer: keys.pinnedPeer, acceptsOnRead: acceptsOnRead, onRejected: onRejected, onEnd: {})
            case let .authorized(identity, keyring):
                let channel = try await keyring.accept(
                    over: transport, identity: identity, limits: options.secureLimits, logger: options.logger)
                return Secured(
                    channel: channel, peer: channel.peer, acceptsOnRead: acceptsOnRead, onRejected: onRejected,
                    onEnd: { keyring.ended(channel) })
            }
        }
    }

    /// Runs `body`; after `deadline` closes `transport`, which ends the handshake with an error.
    private static func withHandshakeDeadline<T: Sendable>(
        _ deadline: Duration, closing transport: Transport, _ body: @Sendable @escaping () async throws -> T
    ) async throws -> T {
        let watchdog = Task {
            do { try await Task.sleep(for: deadline) } catch { return }
            await transport.close()
        }
        defer { watchdog.cancel() }
        return try await body()
    }
}

extension MessagePipe.Options {
    /// Sealed messages as large as plain ones may be.
    var secureLimits: SecureLimits { SecureLimits(maximumPlaintextSize: maximumMessageSize) }

    /// The warning a message that did not open becomes.
    func rejectionNote(peer: String) -> @Sendable (SecureError) -> Void {
        { error in self.note(.warning, "closing \(peer): \(error)") }
    }
}

extension MessagePipeError {
    /// The refusal a handshake error means, if it means one.
    init?(refusal error: SecureError) {
        switch error {
        case let .notAuthenticated(why): self = .notAuthenticated(why)
        case .refusedByPeer(.notAuthenticated): self = .notAuthenticated("the peer refused our key")
        case .modeMismatch, .refusedByPeer(.modeMismatch): self = .notAuthenticated("\(error)")
        default: return nil
        }
    }
}
