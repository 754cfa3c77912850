import Synchronization

/// Inputs that are one message body each: files, or "-" for standard input. Each is opened when the set is
/// made, so a missing one fails before anything is sent; a body is read when asked for: a file from disk each
/// time, standard input once and kept, so one set can go to several peers.
///
/// ```swift
/// let inputs = try InputFiles(paths: ["photo.jpg", "-"])   // throws FileIOError (.open) for a missing file
/// let body = try inputs.body(1)                            // standard input, read once
/// ```
public final class InputFiles: Sendable {
    public let paths: [String]
    /// The sizes known ahead (regular files; 0 for standard input or a pipe).
    public let sizes: [Int]
    private let standardInput = Mutex<Result<[UInt8], FileIOError>?>(nil)

    /// Opens each of `paths` to check it and learn its size; throws the first that cannot be opened.
    public init(paths: [String]) throws(FileIOError) {
        var sizes: [Int] = []
        for path in paths { sizes.append(try InputFile(path: path).regularFileSize ?? 0) }
        self.paths = paths
        self.sizes = sizes
    }

    /// The body of input `index`.
    public func body(_ index: Int) throws(FileIOError) -> [UInt8] {
        let path = paths[index]
        guard path == "-" else { return try InputFile(path: path).readAll() }
        let result = standardInput.withLock { cached in
            if let cached { return cached }
            let read = Result { () throws(FileIOError) in try InputFile(path: path).readAll() }
            cached = read
            return read
        }
        return try result.get()
    }

    /// Every body, in order, each read before any is returned: an input that cannot be read fails the whole
    /// (its `FileIOError`), so a caller that queues or sends them acts on all of them or none.
    ///
    /// ```swift
    /// for body in try inputs.bodies() { try outbox.enqueue(body) }
    /// ```
    public func bodies() throws(FileIOError) -> [[UInt8]] {
        var bodies: [[UInt8]] = []
        for index in paths.indices { bodies.append(try body(index)) }
        return bodies
    }
}
