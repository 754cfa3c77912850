/// Why a key file (an identity or an authorized-keys file) was refused before anything was served, or a new
/// one could not be made. The description names the file and is printed by the CLI as is.
public enum KeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(path: String)
    case unreadable(path: String, reason: String)
    /// Anyone on the machine could change the file, so its keys prove nothing.
    case worldWritable(path: String)
    case notRegularFile(path: String)
    case tooLarge(path: String, size: Int, limit: Int)
    /// The file's text is not a valid key or key list (the reason names the line).
    case invalid(path: String, reason: String)
    /// A new key file could not be created: it exists (a key file is never replaced), or the directory refused.
    case uncreatable(path: String, reason: String)
    /// A new key file could not be written or synced to disk.
    case unwritable(path: String, reason: String)

    public var description: String {
        switch self {
        case let .missing(path): "key file \(path) does not exist"
        case let .unreadable(path, reason): "key file \(path) cannot be read: \(reason)"
        case let .worldWritable(path): "key file \(path) is writable by every user: chmod o-w \(path)"
        case let .notRegularFile(path): "key file \(path) is not a regular file"
        case let .tooLarge(path, size, limit): "key file \(path) has \(size) bytes, more than the limit of \(limit)"
        case let .invalid(path, reason): "key file \(path): \(reason)"
        case let .uncreatable(path, reason): "key file \(path) cannot be created: \(reason)"
        case let .unwritable(path, reason): "key file \(path) cannot be written: \(reason)"
        }
    }
}
