import ArgumentParser
import MsgPipe

/// The end-to-end keys of `request`, `serve`, `send` and `listen` (PROTOCOL.md 6.1): a pre-shared key file, or
/// our X25519 identity file with the peer's pinned public key (a central; or a server of one peer), or with an
/// authorized-keys file (a server of many). Key files are checked before anything connects or advertises:
/// missing, unreadable, world-writable or invalid exits 78.
struct SecureOptions: ParsableArguments {
    @Option(help: "A pre-shared key file written by 'msgpipe keygen' (both sides use the same file).")
    var keyFile: String?

    @Option(help: "Our X25519 identity file written by 'msgpipe keygen --x25519' (with --peer-key or --authorized-keys).")
    var identity: String?

    @Option(help: "The peer's X25519 public key (msgpipe-x25519-public:HEX or 64 hex digits), pinned.")
    var peerKey: String?

    @Option(help: "Accepting centrals: the file of the X25519 public keys accepted, one 'KEY NAME' a line (SIGHUP reloads it).")
    var authorizedKeys: String?

    /// The exit code when a key file fails its checks.
    static let keyFileExitCode: Int32 = 78

    func validate() throws {
        if keyFile != nil, identity != nil || peerKey != nil || authorizedKeys != nil {
            throw ValidationError("--key-file excludes --identity, --peer-key and --authorized-keys")
        }
        if peerKey != nil, authorizedKeys != nil {
            throw ValidationError("--peer-key pins one peer, --authorized-keys accepts a list: give one of them")
        }
        if identity == nil, peerKey != nil || authorizedKeys != nil {
            throw ValidationError("--peer-key and --authorized-keys go with --identity FILE")
        }
        if identity != nil, peerKey == nil, authorizedKeys == nil {
            throw ValidationError("--identity goes with --peer-key KEY (or, accepting centrals, --authorized-keys FILE)")
        }
    }

    /// Whether any end-to-end key was given.
    var isEnabled: Bool { keyFile != nil || identity != nil }

    /// The credentials of the side that starts the handshake (a central). Exits 78 for a bad key file.
    func credentials() throws -> SecureCredentials {
        if let keyFile {
            return .preSharedKey(try Self.checked(keyFile, KeyFiles.preSharedKey(at:)))
        }
        guard let identity, let peerKey else {
            if authorizedKeys != nil {
                throw ValidationError("--authorized-keys is for the side that accepts centrals: a central pins --peer-key KEY")
            }
            throw ValidationError("give --key-file FILE, or --identity FILE with --peer-key KEY")
        }
        let key = try Self.checked(identity, KeyFiles.identity(at:))
        return .identity(key, peer: try PeerPublicKey(text: peerKey))
    }

    /// The keys of the side that accepts handshakes (a peripheral, `serve`); nil without any key option.
    /// Exits 78 for a bad key file.
    func serverKeys() throws -> PipeKeys? {
        guard isEnabled else { return nil }
        guard let identity, let authorizedKeys else { return .credentials(try credentials()) }
        let key = try Self.checked(identity, KeyFiles.identity(at:))
        let keyring = try Self.checked(authorizedKeys, AuthorizedKeyring.init(path:))
        return .authorized(key, keyring)
    }

    /// The keys of the side that starts the handshake (a central); nil without any key option. Exits 78 for a
    /// bad key file.
    func centralKeys() throws -> PipeKeys? {
        isEnabled ? .credentials(try credentials()) : nil
    }

    private static func checked<T>(_ path: String, _ load: (String) throws(KeyFileError) -> T) throws -> T {
        do {
            return try load(path)
        } catch {
            printError("\(cli: error)")
            throw ExitCode(keyFileExitCode)
        }
    }
}

extension PipeKeys {
    /// With a keyring: ``reloadOnHangup(onReload:)``, each reload's outcome on standard error.
    func reloadOnHangup() async {
        await reloadOnHangup { keyring, outcome in
            switch outcome {
            case let .success(revoked):
                let names = revoked.map(\.label).joined(separator: ", ")
                printError("reloaded \(keyring.path ?? "the authorized keys"): \(keyring.keys.entries.count) keys"
                    + (revoked.isEmpty ? "" : "; revoked \(names)"))
            case let .failure(error):
                printError("reload failed, the keys stay as they were: \(cli: error)")
            }
        }
    }
}
