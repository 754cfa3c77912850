public import Logging
public import Secure
import Synchronization
public import Transport

/// The authorized keys a secure server accepts now, reloadable while it serves, and the sessions they
/// authenticated. ``reload()`` (what `SIGHUP` runs in the CLI) reads the file again: a removed key's new
/// handshakes are refused, and its live sessions are closed at once (their transport ends; a message it was
/// sending is not delivered). A key that stays keeps its sessions, even if its name changed. A file that
/// fails its checks changes nothing.
///
/// ```swift
/// let keyring = try AuthorizedKeyring(path: "/etc/msgpipe/authorized_keys")
/// let channel = try await keyring.accept(over: transport, identity: identity)
/// defer { keyring.ended(channel) }
/// ```
public final class AuthorizedKeyring: Sendable {
    /// The file ``reload()`` reads; nil for a keyring made from keys.
    public let path: String?

    private struct State {
        var keys: AuthorizedKeys
        var sessions: [ObjectIdentifier: (key: PeerPublicKey, channel: SecureChannel)] = [:]
        var refused = 0
    }

    private let state: Mutex<State>
    /// Reads ``path``'s keys; nil for a keyring made from keys.
    private let read: (@Sendable (String) throws(KeyFileError) -> AuthorizedKeys)?

    /// The keys `read` finds in `path`, read again by ``reload()``. ExchangePosix's `init(path:)` reads the
    /// file with `KeyFiles`' checks; `read` is what a platform without files, or a test, brings instead.
    ///
    /// ```swift
    /// let keyring = try AuthorizedKeyring(path: "phones", reading: { name in try settings.authorizedKeys(name) })
    /// ```
    public init(
        path: String, reading read: @escaping @Sendable (_ path: String) throws(KeyFileError) -> AuthorizedKeys
    ) throws(KeyFileError) {
        self.path = path
        self.read = read
        state = Mutex(State(keys: try read(path)))
    }

    /// A keyring of `keys`, changed with ``replace(with:)``.
    public init(keys: AuthorizedKeys) {
        path = nil
        read = nil
        state = Mutex(State(keys: keys))
    }

    /// The keys accepted now.
    public var keys: AuthorizedKeys { state.withLock { $0.keys } }

    /// Sessions authenticated and not yet ended or revoked.
    public var liveSessions: Int { state.withLock { $0.sessions.count } }

    /// Handshakes refused so far (unknown or revoked key, malformed or failed handshake).
    public var refusedHandshakes: Int { state.withLock { $0.refused } }

    /// Reads ``path`` again and accepts its keys from now on; returns the entries it revoked, after their live
    /// sessions were closed. Throws (and keeps the keys it had) when the file fails its checks; a keyring
    /// without a path keeps its keys.
    @discardableResult
    public func reload() async throws(KeyFileError) -> [AuthorizedKeys.Entry] {
        guard let path, let read else { return [] }
        return await replace(with: try read(path))
    }

    /// Accepts `keys` from now on; returns the entries no longer accepted, after their live sessions were closed.
    @discardableResult
    public func replace(with keys: AuthorizedKeys) async -> [AuthorizedKeys.Entry] {
        let (revoked, closing) = state.withLock { state in
            let revoked = state.keys.revoked(by: keys)
            state.keys = keys
            let closing = state.sessions.filter { !keys.contains($0.value.key) }
            for id in closing.keys { state.sessions[id] = nil }
            return (revoked, closing.values.map(\.channel))
        }
        for channel in closing { await channel.close() }
        return revoked
    }

    /// Runs the responder's handshake on `transport` against the keys accepted now (see
    /// ``SecureChannel/accept(over:identity:authorizedKeys:limits:logger:)``) and tracks the session until
    /// ``ended(_:)`` or a reload that revokes its key. A key revoked while its handshake ran is refused too.
    public func accept(
        over transport: Transport, identity: IdentityKey, limits: SecureLimits = SecureLimits(), logger: Logger? = nil
    ) async throws -> SecureChannel {
        let channel: SecureChannel
        do {
            channel = try await SecureChannel.accept(
                over: transport, identity: identity, authorizedKeys: keys, limits: limits, logger: logger)
        } catch {
            state.withLock { $0.refused += 1 }
            throw error
        }
        let registered = state.withLock { state -> Bool in
            guard let peer = channel.peer, state.keys.contains(peer.key) else {
                state.refused += 1
                return false
            }
            state.sessions[ObjectIdentifier(channel)] = (peer.key, channel)
            return true
        }
        guard registered else {
            await channel.close()
            throw SecureError.notAuthenticated("the key of \(channel.peer?.label ?? "the client") was revoked")
        }
        return channel
    }

    /// Stops tracking `channel` (its connection ended).
    public func ended(_ channel: SecureChannel) {
        _ = state.withLock { $0.sessions.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}
