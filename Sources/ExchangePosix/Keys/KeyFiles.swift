public import Exchange
import Glibc
public import Secure

/// Reads the key files a secure server or client starts from, with the checks ssh makes: the file exists,
/// is a regular file no larger than ``maximumSize``, can be read, and is not writable by every user; and
/// creates new ones that pass them (``create(_:holding:)``).
public enum KeyFiles {
    /// The largest key file read (an authorized-keys file of about 6000 keys).
    public static let maximumSize = 1 << 20

    /// Our X25519 identity from the first line of `path` (`msgpipe keygen --x25519 --out FILE`).
    ///
    /// ```swift
    /// let identity = try KeyFiles.identity(at: "/etc/msgpipe/identity")
    /// ```
    public static func identity(at path: String) throws(KeyFileError) -> IdentityKey {
        try firstLine(of: path) { line throws(SecureError) in try IdentityKey(text: line) }
    }

    /// The pre-shared key on the first line of `path` (`msgpipe keygen --out FILE`); both sides read the same
    /// file.
    ///
    /// ```swift
    /// let credentials = SecureCredentials.preSharedKey(try KeyFiles.preSharedKey(at: "/etc/msgpipe/psk"))
    /// ```
    public static func preSharedKey(at path: String) throws(KeyFileError) -> PreSharedKey {
        try firstLine(of: path) { line throws(SecureError) in try PreSharedKey(text: line) }
    }

    /// The key `parse` makes of the first line of `path`; its error becomes ``KeyFileError/invalid(path:reason:)``.
    private static func firstLine<Key>(
        of path: String, _ parse: (String) throws(SecureError) -> Key
    ) throws(KeyFileError) -> Key {
        let text = try contents(of: path)
        let line = text.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        do {
            return try parse(String(decoding: line, as: UTF8.self))
        } catch {
            throw .invalid(path: path, reason: "\(error)")
        }
    }

    /// The authorized keys in `path` (format: ``AuthorizedKeys``).
    public static func authorizedKeys(at path: String) throws(KeyFileError) -> AuthorizedKeys {
        let text = try contents(of: path)
        do {
            return try AuthorizedKeys(parsing: text)
        } catch {
            throw .invalid(path: path, reason: "\(error)")
        }
    }

    /// The bytes of `path` after the checks above.
    public static func contents(of path: String) throws(KeyFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { throw .missing(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path: path) }
        guard status.st_mode & S_IWOTH == 0 else { throw .worldWritable(path: path) }
        guard status.st_size <= maximumSize else {
            throw .tooLarge(path: path, size: Int(status.st_size), limit: maximumSize)
        }
        var bytes = [UInt8](repeating: 0, count: maximumSize + 1)
        var count = 0
        while count < bytes.count {
            let result = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if result == 0 { break }
            count += result
        }
        guard count <= maximumSize else { throw .tooLarge(path: path, size: count, limit: maximumSize) }
        return Array(bytes.prefix(count))
    }

    /// A new key as text: a pre-shared key line (`msgpipe-psk:HEX`, the same file on both sides), or with
    /// `x25519` an identity's private line (`msgpipe-x25519-private:HEX`) and its public key
    /// (`msgpipe-x25519-public:HEX`), which the peer pins. Keep `secret` with ``create(_:holding:)``.
    ///
    /// ```swift
    /// let (secret, publicKey) = KeyFiles.newKey(x25519: true)
    /// try KeyFiles.create("/etc/msgpipe/identity", holding: secret + "\n")
    /// ```
    public static func newKey(x25519: Bool) -> (secret: String, publicKey: String?) {
        guard x25519 else { return (PreSharedKey().text, nil) }
        let identity = IdentityKey()
        return (identity.text, identity.publicKey.text)
    }

    /// Creates `path` with mode 0600 (before the umask) holding `text`; returns once the file and its directory
    /// entry are on stable storage (`fsync`). Never replaces a file: throws ``KeyFileError/uncreatable(path:reason:)``
    /// when `path` exists or cannot be created, ``KeyFileError/unwritable(path:reason:)`` when the write or a sync
    /// fails, and then removes the file it started (a partial key must not block the next attempt).
    ///
    /// ```swift
    /// try KeyFiles.create("/etc/msgpipe/psk", holding: PreSharedKey().text + "\n")
    /// ```
    public static func create(_ path: String, holding text: String) throws(KeyFileError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .uncreatable(path: path, reason: String(cString: strerror(errno))) }
        defer { _ = close(descriptor) }
        let bytes = Array(text.utf8)
        var count = 0
        do throws(KeyFileError) {
            while count < bytes.count {
                let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + count, $0.count - count) }
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
                count += result
            }
            guard fsync(descriptor) == 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
            let slash = path.lastIndex(of: "/")
            let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
            do { try JournalFile.syncDirectory(directory) } catch { throw .unwritable(path: path, reason: "\(error)") }
        } catch {
            _ = unlink(path)
            throw error
        }
    }
}
