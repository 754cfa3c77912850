/// Where a ``MessageInbox`` puts the messages it keeps: ``MessageDirectory``, or an application's own output
/// (a database, a stream). The inbox calls it from one task at a time, a batch of messages per call.
///
/// A message is kept in two steps around the inbox's journal: ``write(_:)`` makes it durable under a name that
/// readers do not see yet, the journal records it, then ``publish(_:)`` gives it its final name. An output
/// whose writes are final at once (a stream) returns empty names and publishes nothing.
public protocol InboxOutput: Sendable {
    /// What the output needs to write one message (its bytes and whatever it records beside them).
    associatedtype Item: Sendable

    /// Writes `items` in order so that they survive a crash or a power cut, as far as this output can (each
    /// file and its directory synced; a stream written, and synced where it is a file). Returns one name per
    /// item to pass to ``publish(_:)`` ("" when there is nothing to publish). On failure nothing of the batch
    /// may stay visible.
    func write(_ items: [Item]) throws(InboxError) -> [String]

    /// Gives written messages their final names, durably. Names that are already final are skipped.
    func publish(_ names: [String]) throws(InboxError)

    /// Removes written messages that will not be published (the journal could not record them).
    func discard(_ names: [String])

    /// At open: publishes `names` (written and journaled before a crash) and removes anything else written and
    /// never journaled (its sender was never told, so it sends it again).
    func recover(publishing names: [String]) throws(InboxError)
}
