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

/// Lines of an input, read in chunks and bounded in length; a final line without `\n` counts.
struct LineReader {
    private let input: InputFile
    private let maximumLength: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line last returned (1-based).
    private(set) var lineNumber = 0

    init(_ input: InputFile, maximumLength: Int) {
        self.input = input
        self.maximumLength = maximumLength
    }

    /// The next line without its `\n` (and `\r`), nil at the end; throws for a line over the maximum length.
    mutating func nextLine() throws(LineError) -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                lineNumber += 1
                guard line.count <= maximumLength + 1 else { throw .tooLong(line: lineNumber, limit: maximumLength) }
                return line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            }
            guard buffer.count - start <= maximumLength + 1 else {
                throw .tooLong(line: lineNumber + 1, limit: maximumLength)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                lineNumber += 1
                return line
            }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            do {
                atEnd = try input.read(appendingTo: &buffer, count: 1 << 16) == 0
            } catch {
                throw .io(error)
            }
        }
    }

    enum LineError: Error {
        case tooLong(line: Int, limit: Int)
        case io(FileIOError)
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
