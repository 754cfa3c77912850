import Glibc

/// Why reading an ``InputFile`` or writing an ``OutputBuffer`` failed: the operation, and a description that
/// names the file and the system's reason ("cannot open notes.txt: No such file or directory").
public struct FileIOError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public enum Operation: Equatable, Sendable {
        case open, read, write
        /// The input holds more than `limit` bytes.
        case tooLarge(limit: Int)
    }

    public let operation: Operation
    public let description: String

    public init(operation: Operation, description: String) {
        self.operation = operation
        self.description = description
    }

    /// `what` with the reason `errno` gives.
    init(_ operation: Operation, _ what: String) {
        self.init(operation: operation, description: "\(what): \(String(cString: strerror(errno)))")
    }
}
