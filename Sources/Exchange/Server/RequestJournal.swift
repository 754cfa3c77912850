/// The durable record a ``RequestServer`` keeps of the ids it answered, so a retried id gets the same response
/// and its command never runs twice. ExchangePosix's `IdempotencyJournal` is the one on disk.
///
/// Contract: each `record` returns only once what it recorded survives a crash or a power cut (a journal
/// that cannot promise it throws instead). The server records "started" before running the command and
/// "completed" after, so a command runs at most once per id. One journal serves one server.
public protocol RequestJournal: AnyObject {
    /// What the journal knows about `id`; nil for an id it never saw or no longer keeps.
    func entry(for id: RequestID) throws(ExchangeError) -> RequestJournalEntry?
    /// Durably records that the command for `id` is about to run.
    func recordStarted(_ id: RequestID, digest: [UInt8]) throws(ExchangeError)
    /// Durably records the response to its id (`response.id`).
    func recordCompleted(digest: [UInt8], response: ResponseEnvelope) throws(ExchangeError)
    /// What opening the journal repaired, if anything.
    var recoveryNote: String? { get }
}

/// What a ``RequestJournal`` knows about an id.
public enum RequestJournalEntry: Sendable, Equatable {
    /// The command was started (its outcome is unknown).
    case started(digest: [UInt8])
    /// The request was answered with `response`.
    case completed(digest: [UInt8], response: ResponseEnvelope)
}
