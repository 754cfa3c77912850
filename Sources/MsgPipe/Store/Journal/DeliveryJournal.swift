import Exchange
import ExchangePosix
import Glibc
public import Logging

/// The delivery journal of a directory, `DIR/.msgpipe-delivered` (docs/PROTOCOL.md 3.10): which messages were
/// kept, so one that its sender sends again (its acknowledgement died with an earlier process) is not kept
/// twice. Appends are made durable with `fsync` before they return; the file is rewritten whole (atomically)
/// once it holds more than twice ``DeliveryLedger/retainedSessions`` records.
///
/// One journal per directory (a ``DirectoryLock`` on `DIR/.msgpipe-lock`). Opening cuts a torn last append
/// (logged, in ``recoveryNote``) and refuses, changing nothing, a file that is not a delivery journal or that
/// holds a corrupt record followed by more data. (Public to the fuzz package only: `@_spi(Fuzzing)`.)
@_spi(Fuzzing)
public final class DeliveryJournal {
    static let fileName = ".msgpipe-delivered"
    static let lockName = ".msgpipe-lock"
    /// A journal file larger than this is refused rather than read (it is rewritten far below it).
    static let maximumFileSize = 64 << 20

    let directory: String
    private let lock: DirectoryLock
    private var file: JournalFile
    private(set) var ledger: DeliveryLedger
    /// What opening repaired, if anything.
    public private(set) var recoveryNote: String?
    private let logger: Logger?

    /// Opens (or creates) the journal of `directory`, which must exist.
    public init(directory: String, retainedSessions: Int, logger: Logger?) throws(InboxError) {
        self.directory = directory
        self.logger = logger
        do throws(DirectoryLock.Failure) {
            lock = try DirectoryLock(directory: directory, fileName: Self.lockName)
        } catch {
            switch error {
            case .inUse: throw .inUse(directory: directory)
            case let .system(operation, reason): throw .journal("\(operation) failed: \(reason)")
            }
        }
        let path = directory + "/" + Self.fileName
        file = try Self.io { () throws(ExchangeError) in try JournalFile(path: path) }
        ledger = DeliveryLedger(retainedSessions: retainedSessions)
        // Fully initialized from here: deinit closes the file and lets go of the lock if the replay throws.
        guard file.size <= Int64(Self.maximumFileSize) else {
            throw .corruptJournal(path: path, why: "\(file.size) bytes, more than a delivery journal ever holds")
        }
        let bytes = try Self.io { [file] () throws(ExchangeError) in try file.read(at: 0, count: Int(file.size)) }
        let replay: DeliveryJournalReplay.Result
        do throws(DeliveryJournalReplay.Unreadable) {
            replay = try DeliveryJournalReplay.read(bytes)
        } catch {
            switch error {
            case .foreign: throw .foreignJournal(path: path)
            case let .corrupt(offset): throw .corruptJournal(path: path, why: "a corrupt record at offset \(offset) is followed by more data")
            }
        }
        for record in replay.records { ledger.apply(record) }
        if replay.isNew {
            try Self.io { [directory] () throws(ExchangeError) in
                try file.truncate(to: 0)
                _ = try file.appendDurably(DeliveryJournalReplay.header)
                try JournalFile.syncDirectory(directory)
            }
        } else if replay.cutsTail {
            let end = Int64(DeliveryJournalReplay.header.count + replay.validCount)
            let note = "\(path): cut \(file.size - end) bytes of a torn last append at offset \(end) (a crash; those "
                + "messages were not acknowledged, so their senders send them again)"
            logger?.warning("\(note)")
            recoveryNote = note
            try Self.io { () throws(ExchangeError) in try file.truncate(to: end) }
        }
    }

    deinit {
        file.close()
    }

    /// True when message `id` of sender `session` was kept.
    public func contains(session: UInt64, id: UInt32) -> Bool { ledger.contains(session: session, id: id) }

    /// Records message `id` of `session` as kept, durably (the fuzz package's way to append).
    public func recordKept(session: UInt64, id: UInt32) throws(InboxError) {
        try append([.kept(session: session, id: id, name: "")])
    }

    /// The sender sessions remembered.
    public var sessionCount: Int { ledger.sessions.count }

    /// Appends `records` with one write and one `fsync`; returns once they are durable. On failure nothing of
    /// them stays in the file or the ledger.
    func append(_ records: [DeliveryRecord]) throws(InboxError) {
        guard !records.isEmpty else { return }
        let bytes = records.flatMap { $0.encoded() }
        _ = try Self.io { () throws(ExchangeError) in try file.appendDurably(bytes) }
        for record in records { ledger.apply(record) }
        if ledger.recordCount > 2 * ledger.retainedSessions + 64, ledger.unpublished.isEmpty { try compact() }
    }

    /// Rewrites the file with one record per session it remembers (atomically: a crash leaves the old or the new).
    private func compact() throws(InboxError) {
        let records = ledger.snapshot()
        try Self.io { [directory] () throws(ExchangeError) in
            try file.replace(directory: directory) { (new: inout JournalFile) throws(ExchangeError) in
                _ = try new.append(DeliveryJournalReplay.header + records.flatMap { $0.encoded() })
            }
        }
        ledger.compacted()
        logger?.debug("delivery journal compacted", metadata: ["sessions": "\(records.count)"])
    }

    private static func io<T>(_ body: () throws(ExchangeError) -> T) throws(InboxError) -> T {
        do {
            return try body()
        } catch {
            if case let .journal(why) = error { throw .journal(why) }
            throw .journal("\(error)")
        }
    }
}
