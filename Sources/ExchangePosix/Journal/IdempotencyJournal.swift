import DequeModule
public import Exchange
import Glibc
public import Logging

/// The record of answered requests in `--state DIR`: which ids were started, and the response of each
/// completed one, so a retried id gets the same response and its command never runs twice. The
/// ``RequestJournal`` a ``RequestServer`` made with a state directory keeps.
///
/// Guarantee (RequestServer appends "started" before running the command and "completed" after; an append
/// returns only after `fsync`): killed before "started" is durable, nothing ran and a retry runs the command;
/// killed between the two, a retry does NOT run it again and gets ``ResponseStatus/outcomeUnknown``; killed
/// after "completed", a retry gets the recorded response byte for byte. So a command runs at most once per id.
///
/// File: the header `msgpipe journal 1\n`, then ``JournalRecord``s; a torn tail is cut off with a warning, a
/// corrupt record followed by valid data is refused. Responses stay on disk; at most
/// ``ExchangeLimits/retainedRequests`` ids are kept. One journal per directory (a ``DirectoryLock`` on `DIR/lock`).
public final class IdempotencyJournal: RequestJournal {
    /// What the journal knows about an id.
    public typealias Entry = RequestJournalEntry

    private enum Slot {
        case started(digest: [UInt8], offset: Int64, count: Int)
        case completed(digest: [UInt8], offset: Int64, count: Int)
    }

    static let fileName = "journal"
    static let header = Array("msgpipe journal 1\n".utf8)

    private let directory: String
    private let limits: ExchangeLimits
    private let logger: Logger?
    private var file: JournalFile
    private let lock: DirectoryLock
    var lockDescriptor: Int32 { lock.descriptor }  // internal: tests copy it
    private var slots: [RequestID: Slot] = [:]
    private var completedOrder = Deque<RequestID>()
    private var recordCount = 0

    /// What opening the journal repaired, if anything (also logged as a warning).
    public private(set) var recoveryNote: String?

    /// Opens (or creates) the journal in `directory` and replays it. Throws ``ExchangeError/journalInUse(path:)``
    /// while another journal holds `directory` (an advisory lock, let go when that one is gone).
    public init(directory: String, limits: ExchangeLimits = ExchangeLimits(), logger: Logger? = nil) throws(ExchangeError) {
        self.directory = directory
        self.limits = limits
        self.logger = logger
        if mkdir(directory, 0o700) != 0, errno != EEXIST { throw JournalFile.failure("create \(directory)") }
        do throws(DirectoryLock.Failure) {
            lock = try DirectoryLock(directory: directory, fileName: "lock")
        } catch {
            switch error {
            case .inUse: throw .journalInUse(path: directory)
            case let .system(operation, reason): throw .journal("\(operation) failed: \(reason)")
            }
        }
        file = try JournalFile(path: directory + "/" + Self.fileName)
        // Fully initialized from here: if the replay throws, deinit closes the file and lets go of the directory.
        try replay()
    }

    deinit {
        file.close()
    }

    /// The number of answered ids kept.
    public var completedCount: Int { completedOrder.count }

    /// What the journal knows about `id`.
    public func entry(for id: RequestID) throws(ExchangeError) -> Entry? {
        switch slots[id] {
        case nil:
            return nil
        case let .started(digest, _, _):
            return .started(digest: digest)
        case let .completed(digest, offset, count):
            guard let record = JournalRecord(decoding: try file.read(at: offset, count: count)[...]),
                case let .completed(_, response) = record
            else { throw .journal("the record of \(id) at offset \(offset) no longer reads back") }
            return .completed(digest: digest, response: response)
        }
    }

    /// Durably records that the command for `id` is about to run.
    public func recordStarted(_ id: RequestID, digest: [UInt8]) throws(ExchangeError) {
        let bytes = JournalRecord.started(id: id, digest: digest).encoded()
        let offset = try file.appendDurably(bytes)
        slots[id] = .started(digest: digest, offset: offset, count: bytes.count)
        recordCount += 1
    }

    /// Durably records the response to `id`; forgets the oldest answered ids beyond the retention limit.
    public func recordCompleted(digest: [UInt8], response: ResponseEnvelope) throws(ExchangeError) {
        let bytes = JournalRecord.completed(digest: digest, response: response).encoded()
        let offset = try file.appendDurably(bytes)
        apply(.completed(digest: digest, offset: offset, count: bytes.count), for: response.id)
        recordCount += 1
        if recordCount > 2 * limits.retainedRequests + 16 { try compact() }
    }

    // MARK: Replay and compaction

    private func apply(_ slot: Slot, for id: RequestID) {
        if case .completed = slot {
            if case .completed? = slots[id] { completedOrder.removeAll { $0 == id } }
            completedOrder.append(id)
            while completedOrder.count > limits.retainedRequests, let oldest = completedOrder.popFirst() {
                slots[oldest] = nil
            }
        }
        slots[id] = slot
    }

    private func replay() throws(ExchangeError) {
        if file.size == 0 {
            _ = try file.appendDurably(Self.header)
            try JournalFile.syncDirectory(directory)
            return
        }
        guard try file.read(at: 0, count: Self.header.count) == Self.header else {
            throw .journal("\(file.path) is not a msgpipe journal; refusing to overwrite it")
        }
        let maximumPayload = JournalRecord.digestCount + limits.maximumResponseSize + ExchangeLimits.envelopeOverhead
        var offset = Int64(Self.header.count)
        while offset < file.size {
            let header = try file.read(at: offset, count: JournalRecord.headerCount)
            let payload = JournalRecord.payloadCount(header: header[...])
            let end = payload.map { offset + Int64(JournalRecord.headerCount + $0 + JournalRecord.trailerCount) }
            if let payload, let end, payload <= maximumPayload, end <= file.size,
                let record = JournalRecord(decoding: try file.read(at: offset, count: Int(end - offset))[...])
            {
                switch record {
                case let .started(id, digest):
                    apply(.started(digest: digest, offset: offset, count: Int(end - offset)), for: id)
                case let .completed(digest, response):
                    apply(.completed(digest: digest, offset: offset, count: Int(end - offset)), for: response.id)
                }
                recordCount += 1
                offset = end
                continue
            }
            try cutTail(at: offset, recordEnd: end)
            return
        }
    }

    /// Cuts a torn or corrupt last record; refuses a corrupt record that valid data follows.
    private func cutTail(at offset: Int64, recordEnd: Int64?) throws(ExchangeError) {
        let rest = try file.read(at: offset, count: Int(min(file.size - offset, 1 << 20)))
        let isTail = recordEnd.map { $0 >= file.size } ?? false
        guard isTail || rest.allSatisfy({ $0 == 0 }) || file.size - offset < JournalRecord.headerCount else {
            throw .journal(
                "\(file.path): corrupt record at offset \(offset) followed by more data; refusing to start "
                    + "(move the file aside to start with an empty journal)")
        }
        let note = "\(file.path): cut \(file.size - offset) bytes of a torn or corrupt last record at offset "
            + "\(offset) (an append interrupted by a crash; that request was not recorded)"
        logger?.warning("\(note)")
        recoveryNote = note
        try file.truncate(to: offset)
    }

    /// Rewrites the journal with only the records still kept, one record in memory at a time.
    private func compact() throws(ExchangeError) {
        let old = file
        var moved: [(RequestID, Slot)] = []
        let kept = slots.filter { if case .started = $0.value { true } else { false } }.map(\.key) + completedOrder
        try file.replace(directory: directory) { (new: inout JournalFile) throws(ExchangeError) in
            _ = try new.append(Self.header)
            for id in kept {
                switch slots[id] {
                case let .started(digest, offset, count)?:
                    let newOffset = try new.append(try old.read(at: offset, count: count))
                    moved.append((id, .started(digest: digest, offset: newOffset, count: count)))
                case let .completed(digest, offset, count)?:
                    let newOffset = try new.append(try old.read(at: offset, count: count))
                    moved.append((id, .completed(digest: digest, offset: newOffset, count: count)))
                case nil:
                    continue
                }
            }
        }
        for (id, slot) in moved { slots[id] = slot }
        recordCount = moved.count
        logger?.debug("journal compacted", metadata: ["records": "\(recordCount)"])
    }
}
