/// Why the bond store could not be read or written. Each `description` names the file and the remedy.
public enum BondStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is not a bond file msgpipe can read; it was left exactly as it is.
    case corrupt(path: String, line: Int, reason: String)
    /// The file exists but could not be read (permissions, I/O).
    case unreadable(path: String, errno: Int32, message: String)
    /// The file or the directory could not be written; the previous file is unchanged.
    case writeFailed(path: String, call: String, errno: Int32, message: String)

    public var description: String {
        switch self {
        case let .corrupt(path, line, reason):
            "the bond file \(path) is corrupt (line \(line): \(reason)); msgpipe left it untouched: "
                + "fix it, or move it away and pair the phones again"
        case let .unreadable(path, errno, message):
            "cannot read the bond file \(path): \(message) (errno \(errno)); msgpipe left it untouched"
        case let .writeFailed(path, call, errno, message):
            "cannot write the bond file \(path): \(call) failed: \(message) (errno \(errno)); the previous file is unchanged"
        }
    }
}
