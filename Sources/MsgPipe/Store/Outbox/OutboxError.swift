/// Why an outbox refused a message, could not open, or stopped delivering. The description is printed as is.
/// Nothing an outbox holds is dropped on any of these: what was queued stays queued.
public enum OutboxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another outbox, in this process or another, uses `directory`.
    case inUse(directory: String)
    /// The outbox holds `messages` messages of `bytes` bytes: one of `size` more would pass its limits.
    case full(directory: String, messages: Int, bytes: Int, size: Int)
    /// The outbox holds `messages` messages of `bytes` bytes: a batch of `count` messages, `size` bytes in all,
    /// would pass its limits; none of the batch was queued.
    case batchFull(directory: String, messages: Int, bytes: Int, count: Int, size: Int)
    /// A message of `size` bytes is larger than the outbox takes (`limit`).
    case tooLarge(size: Int, limit: Int)
    /// The state file at `path` is not a msgpipe outbox's (version 1); nothing was changed.
    case foreignState(path: String)
    /// The state file at `path` is damaged; nothing was changed.
    case corruptState(path: String)
    /// Writing, syncing or reading a file failed: the operation and the system's reason.
    case io(String)
    /// Delivery gave up after the reconnect attempts: `remaining` messages stay queued; `cause` is the last failure.
    case undelivered(remaining: Int, cause: String)
    /// The peer refused our end-to-end key, holds another one, or takes only sealed messages: `remaining`
    /// messages stay queued (no message goes until the keys change).
    case notAuthenticated(remaining: Int, reason: String)
    /// The delivering task was cancelled: `remaining` messages stay queued.
    case cancelled(remaining: Int)
    /// The outbox was closed.
    case closed

    public var description: String {
        switch self {
        case let .inUse(directory):
            "\(directory) is in use by another msgpipe sender; wait for it to finish, or give this one another directory"
        case let .full(directory, messages, bytes, size):
            "\(directory) is full (\(messages) messages, \(bytes) bytes): a message of \(size) bytes was not queued; "
                + "deliver what it holds first, or raise its limit"
        case let .batchFull(directory, messages, bytes, count, size):
            "\(directory) is full (\(messages) messages, \(bytes) bytes): \(count) messages of \(size) bytes in all were "
                + "not queued, none of them; deliver what it holds first, or raise its limit"
        case let .tooLarge(size, limit): "a message of \(size) bytes is larger than the outbox takes (\(limit) bytes)"
        case let .foreignState(path):
            "\(path) is not a msgpipe outbox state; nothing was changed (use another directory)"
        case let .corruptState(path):
            "\(path) is damaged; nothing was changed (move it aside to go on: messages whose acknowledgement was "
                + "lost may then be delivered twice)"
        case let .io(why): why
        case let .undelivered(remaining, cause): "\(remaining) messages stay queued: \(cause)"
        case let .notAuthenticated(remaining, reason): "\(remaining) messages stay queued: not authenticated: \(reason)"
        case let .cancelled(remaining): "stopped: \(remaining) messages stay queued"
        case .closed: "the outbox is closed"
        }
    }
}
