/// What a delivery journal knows, replayed from its records: for each sender session the highest message id
/// kept (Transport delivers a session's messages in id order, so every id up to it was kept or given up by
/// its sender), for the ``retainedSessions`` sessions that kept a message most recently; and the files of the
/// `K` records after the last `P`, which may still wait under their temporary names.
struct DeliveryLedger: Sendable {
    struct Entry: Sendable, Equatable {
        var highestID: UInt32
        /// When the session last kept a message (a counter): the oldest is forgotten first.
        var lastUse: UInt64
    }

    let retainedSessions: Int
    private(set) var sessions: [UInt64: Entry] = [:]
    private(set) var unpublished: [String] = []
    /// Records applied since the journal was last written whole (compaction).
    private(set) var recordCount = 0
    private var clock: UInt64 = 0

    init(retainedSessions: Int) {
        self.retainedSessions = max(1, retainedSessions)
    }

    /// True when message `id` of `session` was kept.
    func contains(session: UInt64, id: UInt32) -> Bool {
        sessions[session].map { id <= $0.highestID } ?? false
    }

    mutating func apply(_ record: DeliveryRecord) {
        recordCount += 1
        switch record {
        case .published:
            unpublished = []
        case let .kept(session, id, name):
            clock += 1
            let highest = max(id, sessions[session]?.highestID ?? 0)
            sessions[session] = Entry(highestID: highest, lastUse: clock)
            if !name.isEmpty { unpublished.append(name) }
            if sessions.count > retainedSessions, let oldest = sessions.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                sessions[oldest.key] = nil
            }
        }
    }

    /// The records that rebuild what this ledger knows, oldest use first, with no file waiting.
    func snapshot() -> [DeliveryRecord] {
        sessions.sorted { $0.value.lastUse < $1.value.lastUse }.map { .kept(session: $0.key, id: $0.value.highestID, name: "") }
    }

    /// The ledger once its journal was rewritten from ``snapshot()``.
    mutating func compacted() {
        recordCount = sessions.count
        unpublished = []
    }
}

/// Reading a delivery journal's bytes (docs/PROTOCOL.md 3.10): pure, so the fuzzer reaches it.
enum DeliveryJournalReplay {
    static let header = Array("msgpipe delivered 1\n".utf8)
    /// The most bytes of a torn last append that are cut off (a batch of records is written at once).
    static let tornTailLimit = 64 << 10

    /// What the bytes of a journal file hold.
    struct Result: Equatable {
        var records: [DeliveryRecord]
        /// The bytes that are whole records after the header (the file is cut to `header.count + validCount`).
        var validCount: Int
        /// True when the bytes after them are a torn last record (or zeros) to cut off.
        var cutsTail: Bool { validCount < totalCount }
        var totalCount: Int
        /// The file is empty, or a torn header: it is written anew.
        var isNew: Bool
    }

    /// Why the bytes are not a delivery journal (nothing is changed).
    enum Unreadable: Error, Equatable {
        /// The bytes do not begin with ``header``.
        case foreign
        /// A corrupt record at `offset` (from the file's start) is followed by more data.
        case corrupt(offset: Int)
    }

    static func read(_ bytes: [UInt8]) throws(Unreadable) -> Result {
        if bytes.count < header.count {
            guard header.starts(with: bytes) else { throw .foreign }
            return Result(records: [], validCount: 0, totalCount: 0, isNew: true)
        }
        guard bytes.starts(with: header) else { throw .foreign }
        var records: [DeliveryRecord] = []
        var offset = header.count
        while offset < bytes.count {
            switch DeliveryRecord.read(bytes[offset...]) {
            case let .record(record, count):
                records.append(record)
                offset += count
            case .truncated:
                return Result(records: records, validCount: offset - header.count, totalCount: bytes.count - header.count, isNew: false)
            case .corrupt:
                // A torn append leaves zeros, or at most one batch of garbage with no whole record in it, at the
                // end; anything else is refused.
                let isTornTail = bytes.count - offset <= tornTailLimit && !containsRecord(after: offset, in: bytes)
                if isTornTail || bytes[offset...].allSatisfy({ $0 == 0 }) {
                    return Result(records: records, validCount: offset - header.count, totalCount: bytes.count - header.count, isNew: false)
                }
                throw .corrupt(offset: offset)
            }
        }
        return Result(records: records, validCount: offset - header.count, totalCount: offset - header.count, isNew: false)
    }

    /// True when a whole, valid record starts somewhere after `offset`: the corruption is not a torn tail.
    private static func containsRecord(after offset: Int, in bytes: [UInt8]) -> Bool {
        var index = offset + 1
        while index < bytes.count {
            if bytes[index] == DeliveryRecord.magic, case .record = DeliveryRecord.read(bytes[index...]) { return true }
            index += 1
        }
        return false
    }
}
