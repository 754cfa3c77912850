import Glibc

/// Why reading input or writing output failed in a framing command.
struct FileIOError: Error, CustomStringConvertible {
    let description: String
    /// The sysexits code: 66 (cannot open input) or 74 (I/O error).
    let exitCode: Int32
}

/// Standard input or a named file, read in chunks (no Foundation).
final class InputFile {
    private let descriptor: Int32
    private let name: String

    /// Opens `path`, or standard input when `path` is nil or "-".
    init(path: String?) throws(FileIOError) {
        guard let path, path != "-" else {
            descriptor = STDIN_FILENO
            name = "standard input"
            return
        }
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else {
            throw FileIOError(description: "cannot open \(path): \(String(cString: strerror(errno)))", exitCode: 66)
        }
        descriptor = opened
        name = path
    }

    deinit {
        if descriptor != STDIN_FILENO { close(descriptor) }
    }

    /// Appends up to `count` bytes to `buffer`; returns how many were read, 0 at the end of the input.
    func read(appendingTo buffer: inout [UInt8], count: Int) throws(FileIOError) -> Int {
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
                throw FileIOError(description: "cannot read \(name): \(String(cString: strerror(errno)))", exitCode: 74)
            }
        }
    }

    /// Reads everything to the end of the input.
    func readAll() throws(FileIOError) -> [UInt8] {
        var bytes: [UInt8] = []
        while try read(appendingTo: &bytes, count: 1 << 16) > 0 {}
        return bytes
    }
}

/// Standard output, buffered and written with `write(2)` (no Foundation).
struct OutputBuffer {
    private var pending: [UInt8] = []
    private let descriptor: Int32

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        pending.reserveCapacity(1 << 16)
    }

    mutating func append(_ bytes: some Sequence<UInt8>) throws(FileIOError) {
        pending.append(contentsOf: bytes)
        if pending.count >= 1 << 16 { try flush() }
    }

    mutating func flush() throws(FileIOError) {
        var written = 0
        while written < pending.count {
            let count = pending.withUnsafeBytes { bytes in
                Glibc.write(descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileIOError(description: "cannot write output: \(String(cString: strerror(errno)))", exitCode: 74)
            }
            written += count
        }
        pending.removeAll(keepingCapacity: true)
    }
}

/// Writes `message` and a newline to standard error, prefixed with "msgpipe: ".
func printError(_ message: String) {
    let line = Array("msgpipe: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
