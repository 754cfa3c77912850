/// Why an inbox could not keep a message, or could not open. The description is printed as is. Nothing an
/// inbox failed to keep was acknowledged: its sender sends it again.
public enum InboxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another inbox, in this process or another, keeps messages in `directory`.
    case inUse(directory: String)
    /// The journal file at `path` is not a msgpipe delivery journal (version 1); it was not changed.
    case foreignJournal(path: String)
    /// The journal file at `path` is damaged beyond a torn last append; it was not changed.
    case corruptJournal(path: String, why: String)
    /// Writing or syncing the output failed: the operation and the system's reason (a full disk, a read-only one).
    case io(String)
    /// Writing or syncing the journal failed: the operation and the system's reason.
    case journal(String)
    /// A message was handed to an inbox after ``MessageInbox/close()``, or past its limit; it was not kept.
    case closed

    public var description: String {
        switch self {
        case let .inUse(directory):
            "\(directory) is in use by another msgpipe receiver; stop that one, or give this one another directory"
        case let .foreignJournal(path):
            "\(path) is not a msgpipe delivery journal; nothing was changed (move it aside to start a new journal)"
        case let .corruptJournal(path, why):
            "\(path) is damaged (\(why)); nothing was changed (move it aside to start a new journal: messages "
                + "whose acknowledgement was lost may then be kept twice)"
        case let .io(why): why
        case let .journal(why): "delivery journal: \(why)"
        case .closed: "the inbox is closed"
        }
    }
}
