import ArgumentParser
import Glibc
import Secure

/// The end-to-end key of `request` and `serve`: a pre-shared key file, or our X25519 identity file and
/// the peer's pinned public key (PROTOCOL.md 6.1).
struct SecureOptions: ParsableArguments {
    @Option(help: "A pre-shared key file written by 'msgpipe keygen' (both sides use the same file).")
    var keyFile: String?

    @Option(help: "Our X25519 identity file written by 'msgpipe keygen --x25519' (with --peer-key).")
    var identity: String?

    @Option(help: "The peer's X25519 public key (msgpipe-x25519-public:HEX or 64 hex digits), pinned.")
    var peerKey: String?

    func validate() throws {
        switch (keyFile, identity, peerKey) {
        case (_?, nil, nil), (nil, _?, _?): return
        case (nil, nil, nil): throw ValidationError("give --key-file FILE, or --identity FILE with --peer-key KEY")
        case (_?, _, _): throw ValidationError("--key-file excludes --identity and --peer-key")
        default: throw ValidationError("--identity and --peer-key go together")
        }
    }

    func credentials() throws -> SecureCredentials {
        if let keyFile {
            return .preSharedKey(try PreSharedKey(text: try Self.readKeyFile(keyFile)))
        }
        guard let identity, let peerKey else { throw ValidationError("missing --identity or --peer-key") }
        return .identity(try IdentityKey(text: try Self.readKeyFile(identity)), peer: try PeerPublicKey(text: peerKey))
    }

    /// The first line of a small key file.
    static func readKeyFile(_ path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ValidationError("cannot open key file \(path): \(String(cString: strerror(errno)))")
        }
        defer { _ = close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { throw ValidationError("key file \(path) is empty or unreadable") }
        return String(decoding: buffer.prefix(count), as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map(String.init) ?? ""
    }
}
