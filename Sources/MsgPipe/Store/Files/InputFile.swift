import Glibc

/// A named file or standard input, read in chunks or whole, optionally within a size limit (no Foundation).
/// Each failure is a ``FileIOError`` that names the file and the system's reason.
///
/// ```swift
/// let body = try InputFile(path: "-").readAll(limit: 256 << 10)   // standard input, at most 256 KiB
/// ```
public final class InputFile {
    private let descriptor: Int32
    /// What a failure calls the input: its path, or "standard input".
    public let name: String

    /// Opens `path`, or standard input when `path` is nil or "-". Throws ``FileIOError/Operation/open``.
    public init(path: String?) throws(FileIOError) {
        guard let path, path != "-" else {
            descriptor = STDIN_FILENO
            name = "standard input"
            return
        }
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { throw FileIOError(.open, "cannot open \(path)") }
        descriptor = opened
        name = path
    }

    deinit {
        if descriptor != STDIN_FILENO { close(descriptor) }
    }

    /// The size of a regular file opened by path; nil for standard input, a pipe or a device (not known ahead).
    public var regularFileSize: Int? {
        var status = stat()
        guard descriptor != STDIN_FILENO, fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Appends up to `count` bytes to `buffer`; returns how many were read, 0 at the end of the input.
    public func read(appendingTo buffer: inout [UInt8], count: Int) throws(FileIOError) -> Int {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: count))
        while true {
            let got = buffer.withUnsafeMutableBytes { bytes in
                Glibc.read(descriptor, bytes.baseAddress.map { $0 + start }, count)
            }
            if got >= 0 {
                buffer.removeLast(count - got)
                return got
            }
            guard errno == EINTR else {
                buffer.removeLast(count)
                throw FileIOError(.read, "cannot read \(name)")
            }
        }
    }

    /// Reads everything to the end of the input; past `limit` bytes (nil: none) it stops and throws
    /// ``FileIOError/Operation/tooLarge(limit:)``.
    public func readAll(limit: Int? = nil) throws(FileIOError) -> [UInt8] {
        var bytes: [UInt8] = []
        while try read(appendingTo: &bytes, count: 1 << 16) > 0 {
            if let limit, bytes.count > limit {
                throw FileIOError(operation: .tooLarge(limit: limit), description: "\(name) is larger than \(limit) bytes")
            }
        }
        return bytes
    }
}
