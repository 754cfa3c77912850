public import Logging
public import MsgPipeCore
import Synchronization

/// Keeps received messages durably, accepting each (`PipeMessage.accept()`) only once it is kept: exactly once
/// across crashes and restarts (docs/PROTOCOL.md 3.10). Needs `MessagePipe.Options.holdsAcknowledgements`;
/// messages handed over together share one journal `fsync`; a message the journal already holds is accepted
/// without being written again; one that could not be kept is never accepted.
///
/// ```swift
/// let inbox = try MessageInbox(directory: "inbox")
/// for await message in pipe.messages { try await inbox.keep(message) }
/// ```
public final class MessageInbox<Output: InboxOutput>: Sendable {
    public struct Options: Sendable {
        /// The journal remembers the sender sessions that kept a message most recently, this many; a message
        /// resent by an older session is kept again.
        public var retainedSessions = 4096
        /// Keep at most this many messages (duplicates not counted); later ones are neither kept nor
        /// acknowledged. nil: no limit.
        public var limit: Int?
        /// The most messages written in one batch.
        public var maximumBatch = 256
        /// Told each message once it is kept (or found kept before) and accepted, in order; called on the
        /// inbox's task, must not block.
        public var onKept: @Sendable (InboxReceipt) -> Void = { _ in }
        /// Told the inbox's failure, once: nothing handed to it from then on is kept.
        public var onFailure: @Sendable (InboxError) -> Void = { _ in }
        public var logger: Logger?

        public init() {}
    }

    private struct Pending: Sendable {
        let message: PipeMessage
        let item: Output.Item
        let waiter: CheckedContinuation<InboxReceipt, any Error>?
    }

    private enum EnqueueOutcome { case queued(CheckedContinuation<Void, Never>?), refused(InboxError) }
    private enum NextBatch { case batch([Pending]), done, wait }

    private struct State: Sendable {
        var pending: [Pending] = []
        var committer: CheckedContinuation<Void, Never>?
        var failure: InboxError?
        var closing = false
        var kept = 0
    }

    private let output: Output
    private let journal: Mutex<DeliveryJournal?>
    private let options: Options
    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Told when the inbox reaches ``Options/limit`` or fails (``receive(from:onPipe:forwarding:as:)``).
    private let observers = Mutex<[@Sendable (ReceiveEnd) -> Void]>([])

    /// Adds `observer`, told `.limitReached` once ``Options/limit`` messages were kept and `.failed` once the
    /// inbox failed; at once if it already did.
    func observe(_ observer: @escaping @Sendable (ReceiveEnd) -> Void) {
        observers.withLock { $0.append(observer) }
        if let failure { observer(.failed(failure)) } else if let limit = options.limit, keptCount >= limit { observer(.limitReached) }
    }

    private func tell(_ end: ReceiveEnd) {
        for observer in observers.withLock({ $0 }) { observer(end) }
    }

    /// Opens an inbox writing to `output`, with its delivery journal in `journalDirectory` (which must exist;
    /// nil: no journal, so nothing is known across restarts). Recovers what a crash left half done.
    /// Throws ``InboxError/inUse(directory:)`` while another inbox has that directory.
    public init(output: Output, journalDirectory: String?, options: Options = Options()) throws(InboxError) {
        self.output = output
        self.options = options
        let journal = try journalDirectory.map { directory throws(InboxError) in
            try DeliveryJournal(directory: directory, retainedSessions: options.retainedSessions, logger: options.logger)
        }
        try output.recover(publishing: journal?.ledger.unpublished ?? [])
        if let journal, !journal.ledger.unpublished.isEmpty { try journal.append([.published]) }
        self.recoveryNote = journal?.recoveryNote
        self.journal = Mutex(journal)
        task.withLock { $0 = Task { await self.run() } }
    }

    /// What opening the journal repaired (a torn last append, cut off), if anything.
    public let recoveryNote: String?

    /// Messages kept so far (duplicates not counted).
    public var keptCount: Int { state.withLock { $0.kept } }

    /// Why the inbox stopped keeping messages, once it did.
    public var failure: InboxError? { state.withLock { $0.failure } }

    /// Hands `message` over and returns at once; it is written with what else is waiting, then accepted. Its
    /// outcome reaches ``Options/onKept`` or ``Options/onFailure``. Messages are kept in the order handed over.
    public func submit(_ message: PipeMessage, as item: Output.Item) {
        enqueue(Pending(message: message, item: item, waiter: nil))
    }

    /// Keeps `message` and returns once it is kept and accepted.
    @discardableResult
    public func keep(_ message: PipeMessage, as item: Output.Item) async throws(InboxError) -> InboxReceipt {
        do {
            return try await withCheckedThrowingContinuation { continuation in
                enqueue(Pending(message: message, item: item, waiter: continuation))
            }
        } catch let error as InboxError {
            throw error
        } catch {
            throw .closed
        }
    }

    /// Keeps what was handed over, then closes the journal (letting go of its directory).
    public func close() async {
        let committer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closing = true
            defer { state.committer = nil }
            return state.committer
        }
        committer?.resume()
        await task.withLock { $0 }?.value
        journal.withLock { journal in
            if let open = journal, !open.ledger.unpublished.isEmpty { try? open.append([.published]) }
            journal = nil
        }
    }

    private func enqueue(_ pending: Pending) {
        let outcome = state.withLock { state -> EnqueueOutcome in
            if let failure = state.failure { return .refused(failure) }
            if state.closing { return .refused(.closed) }
            state.pending.append(pending)
            defer { state.committer = nil }
            return .queued(state.committer)
        }
        switch outcome {
        case let .queued(committer): committer?.resume()
        case let .refused(error): pending.waiter?.resume(throwing: error)
        }
    }

    // MARK: The commit task

    private func run() async {
        while let batch = await nextBatch() {
            await settle(batch, commit(batch))
        }
    }

    /// What was handed over since the last batch (at most ``Options/maximumBatch``); nil once closed and empty.
    private func nextBatch() async -> [Pending]? {
        while true {
            let next = state.withLock { state -> NextBatch in
                if !state.pending.isEmpty {
                    let batch = Array(state.pending.prefix(options.maximumBatch))
                    state.pending.removeFirst(batch.count)
                    return .batch(batch)
                }
                return state.closing ? .done : .wait
            }
            switch next {
            case let .batch(batch): return batch
            case .done: return nil
            case .wait:
                await withCheckedContinuation { continuation in
                    let wake = state.withLock { state -> Bool in
                        guard state.pending.isEmpty, !state.closing else { return true }
                        state.committer = continuation
                        return false
                    }
                    if wake { continuation.resume() }
                }
            }
        }
    }

    /// Writes the batch, journals it, publishes it: per message its receipt (nil: over the limit), or the
    /// failure that kept none of it.
    private func commit(_ batch: [Pending]) -> Result<[InboxReceipt?], InboxError> {
        journal.withLock { journal -> Result<[InboxReceipt?], InboxError> in
            if let failure = state.withLock({ $0.failure }) { return .failure(failure) }
            var receipts: [InboxReceipt?] = []
            var written: [(index: Int, item: Output.Item)] = []
            var kept = state.withLock { $0.kept }
            for (index, pending) in batch.enumerated() {
                let identity = pending.message.senderSession.flatMap { session in pending.message.id.map { (session, $0) } }
                if let (session, id) = identity, journal?.contains(session: session, id: id) == true {
                    receipts.append(InboxReceipt(name: nil, isDuplicate: true, index: kept))
                } else if let limit = options.limit, kept >= limit {
                    receipts.append(nil)
                } else {
                    kept += 1
                    receipts.append(InboxReceipt(name: "", isDuplicate: false, index: kept))
                    written.append((index, pending.item))
                }
            }
            guard !written.isEmpty else { return .success(receipts) }
            do throws(InboxError) {
                let names = try output.write(written.map(\.item))
                if let journal {
                    var records: [DeliveryRecord] = journal.ledger.unpublished.isEmpty ? [] : [.published]
                    for ((index, _), name) in zip(written, names) {
                        let message = batch[index].message
                        records.append(.kept(session: message.senderSession ?? 0, id: message.id ?? 0, name: name))
                    }
                    do throws(InboxError) {
                        try journal.append(records)
                    } catch {
                        output.discard(names)
                        throw error
                    }
                }
                try output.publish(names)
                for ((index, _), name) in zip(written, names) { receipts[index]?.name = name.isEmpty ? nil : name }
                state.withLock { $0.kept = kept }
                return .success(receipts)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Accepts what the batch kept, in order, and tells its waiters and ``Options/onKept``.
    private func settle(_ batch: [Pending], _ result: Result<[InboxReceipt?], InboxError>) async {
        switch result {
        case let .success(receipts):
            for (pending, receipt) in zip(batch, receipts) {
                guard let receipt else {
                    pending.waiter?.resume(throwing: InboxError.closed)
                    continue
                }
                await pending.message.accept()
                options.onKept(receipt)
                if !receipt.isDuplicate, receipt.index == options.limit { tell(.limitReached) }
                pending.waiter?.resume(returning: receipt)
            }
        case let .failure(error):
            let first = state.withLock { state -> Bool in
                defer { state.failure = state.failure ?? error }
                return state.failure == nil
            }
            if first {
                options.logger?.error("\(error)")
                options.onFailure(error)
                tell(.failed(error))
            }
            for pending in batch { pending.waiter?.resume(throwing: error) }
            // Whatever waits is refused too: nothing after a failure is kept.
            let left = state.withLock { state -> [Pending] in
                defer { state.pending = [] }
                return state.pending
            }
            for pending in left { pending.waiter?.resume(throwing: error) }
        }
    }
}

/// How an inbox kept a message.
public struct InboxReceipt: Sendable, Equatable {
    /// Where it was written, relative to the output (``MessageDirectory``: "00000007.msg", "phone/00000002.msg");
    /// nil for a duplicate or an output without names.
    public var name: String?
    /// The journal held its sender session and id already: it was accepted and not written again.
    public var isDuplicate: Bool
    /// How many messages the inbox had kept with it (1 for the first); a duplicate has the count before it.
    public var index: Int
}

extension MessageInbox where Output == MessageDirectory {
    /// An inbox writing a file per message into `directory` (``MessageDirectory``), its journal beside them.
    public convenience init(directory: String, options: Options = Options()) throws(InboxError) {
        let output = try MessageDirectory(path: directory)
        try self.init(output: output, journalDirectory: directory, options: options)
    }

    /// Keeps `message` as a file in `folder` (nil: the directory itself) and returns once it is kept and accepted.
    @discardableResult
    public func keep(_ message: PipeMessage, folder: String? = nil) async throws(InboxError) -> InboxReceipt {
        try await keep(message, as: MessageDirectory.Item(bytes: message.bytes, folder: folder))
    }
}
