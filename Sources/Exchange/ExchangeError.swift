/// Why an exchange (a request envelope, the journal, a command) failed. The description is printed as is.
public enum ExchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An envelope from the peer is malformed.
    case malformedEnvelope(String)
    /// A request id is empty, too long or not printable ASCII.
    case invalidRequestID(String)
    /// A body is larger than the limit.
    case bodyTooLarge(size: Int, limit: Int)
    /// The journal in the state directory could not be read or written.
    case journal(String)
    /// Another process (another `msgpipe serve`) holds the journal in the directory at `path`; nothing was read.
    case journalInUse(path: String)
    /// The command could not be started.
    case commandNotStarted(String)

    public var description: String {
        switch self {
        case let .malformedEnvelope(why): "malformed envelope: \(why)"
        case let .invalidRequestID(why): "invalid request id: \(why)"
        case let .bodyTooLarge(size, limit): "body of \(size) bytes exceeds the limit of \(limit)"
        case let .journal(why): "journal: \(why)"
        case let .journalInUse(path):
            "journal: \(path) is in use by another server; stop that one, or give this one another state directory"
        case let .commandNotStarted(why): "the command could not be started: \(why)"
        }
    }
}
