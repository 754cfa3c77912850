import Glibc

/// The bond file of one adapter, `DIRECTORY/<adapter address>.bonds`: read at start, written whole after
/// each new key. The directory is created 0700 and the file written 0600, atomically (a temporary file,
/// fsync, rename, fsync of the directory), so a crash leaves the old file or the new one, never half of one.
/// A file that does not parse is never overwritten: ``load()`` throws and nothing is written.
///
/// ```swift
/// let store = BondStore(directory: "/var/lib/msgpipe/bonds", adapter: adapter.address)
/// var bonds = try store.load()          // empty when there is no file yet
/// if bonds.insert(newKey) { try store.save(bonds) }
/// ```
public struct BondStore: Sendable, Equatable {
    public let directory: String
    public let adapter: BluetoothAddress

    public init(directory: String, adapter: BluetoothAddress) {
        self.directory = directory
        self.adapter = adapter
    }

    /// The bond file's path.
    public var path: String { "\(directory)/\(adapter).bonds" }

    /// The bonds on disk; an empty ``BondFile`` when the file (or the directory) does not exist.
    /// Throws ``BondStoreError/corrupt(path:line:reason:)`` or ``BondStoreError/unreadable(path:errno:message:)``.
    public func load() throws(BondStoreError) -> BondFile {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = errno
            if error == ENOENT { return BondFile() }
            throw .unreadable(path: path, errno: error, message: Self.message(error))
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                let error = errno
                throw .unreadable(path: path, errno: error, message: Self.message(error))
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
            if bytes.count > BondFile.maximumSize {
                throw .corrupt(path: path, line: 0, reason: "larger than the \(BondFile.maximumSize) bytes a bond file may hold")
            }
        }
        do {
            return try BondFile(decoding: bytes[...])
        } catch {
            throw .corrupt(path: path, line: error.line, reason: error.reason)
        }
    }

    /// Replaces the file with `bonds` atomically, creating the directory (0700) when missing.
    public func save(_ bonds: BondFile) throws(BondStoreError) {
        try createDirectory()
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("open(\(temporary))", path: temporary) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        guard fchmod(descriptor, 0o600) == 0 else { throw failure("fchmod", path: temporary) }
        let bytes = bonds.encoded()
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let error = failure("write", path: temporary)
                unlink(temporary)
                throw error
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            let error = failure("fsync", path: temporary)
            unlink(temporary)
            throw error
        }
        closed = true
        guard close(descriptor) == 0 else {
            let error = failure("close", path: temporary)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("rename", path: path)
            unlink(temporary)
            throw error
        }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// Creates the directory and any missing parent, each 0700.
    func createDirectory() throws(BondStoreError) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw failure("mkdir(\(prefix))", path: path)
            }
        }
    }

    private func failure(_ call: String, path: String) -> BondStoreError {
        let error = errno
        return .writeFailed(path: path, call: call, errno: error, message: Self.message(error))
    }

    static func message(_ error: Int32) -> String {
        guard let text = strerror(error) else { return "errno \(error)" }
        return String(cString: text)
    }
}
