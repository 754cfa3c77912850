import Foundation
import Testing
@testable import Exchange
@testable import ExchangePosix

@Suite("idempotency journal")
struct IdempotencyJournalTests {
    let digest = [UInt8](repeating: 0xAB, count: 32)

    func response(_ id: String, _ body: String = "ok") throws -> ResponseEnvelope {
        ResponseEnvelope(id: try RequestID(id), status: .ok, body: Array(body.utf8))
    }

    @Test("started and completed records survive reopening")
    func persistence() throws {
        let directory = temporaryDirectory()
        do {
            let journal = try IdempotencyJournal(directory: directory)
            try journal.recordStarted(try RequestID("a"), digest: digest)
            try journal.recordCompleted(digest: digest, response: try response("a", "receipt 1"))
            try journal.recordStarted(try RequestID("b"), digest: digest)
        }
        let reopened = try IdempotencyJournal(directory: directory)
        #expect(try reopened.entry(for: RequestID("a")) == .completed(digest: digest, response: try response("a", "receipt 1")))
        #expect(try reopened.entry(for: RequestID("b")) == .started(digest: digest))
        #expect(try reopened.entry(for: RequestID("c")) == nil)
        #expect(reopened.recoveryNote == nil)
    }

    @Test("a torn last record (any truncation of it) is cut with a note; earlier records stay")
    func tornTail() throws {
        let directory = temporaryDirectory()
        let path = directory + "/journal"
        do {
            let journal = try IdempotencyJournal(directory: directory)
            try journal.recordCompleted(digest: digest, response: try response("a"))
        }
        let intact = try Data(contentsOf: URL(fileURLWithPath: path))
        let last = JournalRecord.completed(digest: digest, response: try response("b", "lost")).encoded()
        for cut in 1..<last.count {
            try (intact + Data(last.prefix(cut))).write(to: URL(fileURLWithPath: path))
            let journal = try IdempotencyJournal(directory: directory)
            #expect(journal.recoveryNote?.contains("torn or corrupt last record") == true)
            #expect(try journal.entry(for: RequestID("a")) != nil)
            #expect(try journal.entry(for: RequestID("b")) == nil)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == intact)
        }
    }

    @Test("a corrupt record followed by valid records is refused, not silently dropped")
    func corruptMiddle() throws {
        let directory = temporaryDirectory()
        do {
            let journal = try IdempotencyJournal(directory: directory)
            try journal.recordCompleted(digest: digest, response: try response("a"))
            try journal.recordCompleted(digest: digest, response: try response("b"))
        }
        let path = directory + "/journal"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[IdempotencyJournal.header.count + 8] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(throws: ExchangeError.self) { try IdempotencyJournal(directory: directory) }
    }

    @Test("a file that is not a journal is refused")
    func notAJournal() throws {
        let directory = temporaryDirectory()
        try Data("hello".utf8).write(to: URL(fileURLWithPath: directory + "/journal"))
        #expect(throws: ExchangeError.self) { try IdempotencyJournal(directory: directory) }
    }

    @Test("one journal per directory: a second opener is refused while the first is open")
    func exclusive() throws {
        let directory = temporaryDirectory()
        let first = try IdempotencyJournal(directory: directory)
        #expect(throws: ExchangeError.journalInUse(path: directory)) {
            try IdempotencyJournal(directory: directory)
        }
        _ = first
    }

    /// A child process started a moment before (between its fork and its exec) shares the lock's open file
    /// description, as the copy here does: the directory is free again once the journal itself is gone.
    @Test("a copy of the lock's descriptor, as a just-forked child holds, does not keep the directory in use")
    func lockIsNotHeldByACopyOfItsDescriptor() throws {
        let directory = temporaryDirectory()
        var copy: Int32 = -1
        do {
            let journal = try IdempotencyJournal(directory: directory)
            try journal.recordStarted(try RequestID("a"), digest: digest)
            copy = dup(journal.lockDescriptor)
        }
        #expect(copy >= 0)
        let reopened = try IdempotencyJournal(directory: directory)
        #expect(try reopened.entry(for: RequestID("a")) == .started(digest: digest))
        #expect(throws: ExchangeError.journalInUse(path: directory)) { try IdempotencyJournal(directory: directory) }
        withExtendedLifetime(reopened) { _ = close(copy) }
    }

    @Test("a journal whose replay fails leaves the directory free")
    func failedOpenLetsGo() throws {
        let directory = temporaryDirectory()
        try Data("hello".utf8).write(to: URL(fileURLWithPath: directory + "/journal"))
        #expect(throws: ExchangeError.self) { try IdempotencyJournal(directory: directory) }
        try FileManager.default.removeItem(atPath: directory + "/journal")
        _ = try IdempotencyJournal(directory: directory)
    }

    @Test("retention keeps the newest answered ids, and compaction keeps the file bounded")
    func retentionAndCompaction() throws {
        let directory = temporaryDirectory()
        let limits = ExchangeLimits(retainedRequests: 5)
        do {
            let journal = try IdempotencyJournal(directory: directory, limits: limits)
            for index in 0..<100 {
                let id = try RequestID("r\(index)")
                try journal.recordStarted(id, digest: digest)
                try journal.recordCompleted(digest: digest, response: try response(id.value, "receipt \(index)"))
            }
            #expect(journal.completedCount == 5)
        }
        let size = try FileManager.default.attributesOfItem(atPath: directory + "/journal")[.size] as! Int
        #expect(size < 40 * 100)
        let reopened = try IdempotencyJournal(directory: directory, limits: limits)
        #expect(try reopened.entry(for: RequestID("r94")) == nil)
        for index in 95..<100 {
            #expect(try reopened.entry(for: RequestID("r\(index)"))
                == .completed(digest: digest, response: try response("r\(index)", "receipt \(index)")))
        }
    }
}
