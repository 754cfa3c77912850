import Foundation
@_spi(Fuzzing) @testable import MsgPipe
import PropertyBased
import TestSupport
import Testing

/// The delivery journal's bytes (docs/PROTOCOL.md 3.10) and what opening one does with a damaged file.
@Suite struct DeliveryJournalTests {
    @Test func recordsMatchTheProtocolVectors() {
        let kept = DeliveryRecord.kept(session: 0x0102_0304_0506_0708, id: 5, name: "00000001.msg")
        #expect(kept.encoded() == bytes("4b4b 00000018 0102030405060708 00000005 30303030303030312e6d7367 f16ad2c0"))
        #expect(DeliveryRecord.published.encoded() == bytes("4b50 00000000 fe3138d6"))
        #expect(DeliveryRecord.read(kept.encoded()[...]) == .record(kept, count: 34))
    }

    @Test("property: records round-trip; any bytes read as a record, torn or corrupt, never trap")
    func recordsRoundTrip() async {
        await propertyCheck(
            count: 200, input: Gen<UInt64>.value(in: 0...UInt64.max), Gen<UInt32>.value(in: 0...UInt32.max),
            Gen<UInt8>.value(in: 0x20...0x7e).array(of: 0...40), Gen<UInt8>.value(in: 0...255).array(of: 0...60)
        ) { session, id, name, garbage in
            let record = DeliveryRecord.kept(session: session, id: id, name: String(decoding: name, as: UTF8.self))
            let bytes = record.encoded()
            #expect(DeliveryRecord.read(bytes[...]) == .record(record, count: bytes.count))
            #expect(DeliveryRecord.read(bytes.dropLast()) == .truncated)
            _ = DeliveryRecord.read(garbage[...])
            _ = try? DeliveryJournalReplay.read(DeliveryJournalReplay.header + garbage)
        }
    }

    @Test func aTornLastAppendIsCutAndEveryWholeRecordKept() throws {
        let directory = try temporaryDirectory()
        let whole = DeliveryRecord.kept(session: 7, id: 3, name: "").encoded()
        let torn = Array(DeliveryRecord.kept(session: 8, id: 1, name: "").encoded().prefix(9))
        try write(DeliveryJournalReplay.header + whole + torn, to: directory + "/" + DeliveryJournal.fileName)
        let journal = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        #expect(journal.contains(session: 7, id: 3))
        #expect(journal.contains(session: 7, id: 2))
        #expect(!journal.contains(session: 7, id: 4))
        #expect(!journal.contains(session: 8, id: 1))
        #expect(journal.recoveryNote?.contains("cut 9 bytes") == true)
        #expect(try read(directory + "/" + DeliveryJournal.fileName) == DeliveryJournalReplay.header + whole)
    }

    @Test func aCorruptRecordFollowedByValidDataIsRefusedAndTheFileLeftAsItWas() throws {
        let directory = try temporaryDirectory()
        var corrupt = DeliveryRecord.kept(session: 7, id: 3, name: "").encoded()
        corrupt[8] ^= 0x01
        let bytes = DeliveryJournalReplay.header + corrupt + DeliveryRecord.kept(session: 9, id: 1, name: "").encoded()
        let path = directory + "/" + DeliveryJournal.fileName
        try write(bytes, to: path)
        #expect(throws: InboxError.corruptJournal(path: path, why: "a corrupt record at offset 20 is followed by more data")) {
            _ = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        }
        #expect(try read(path) == bytes)
    }

    @Test func aForeignFileIsRefusedUnchanged() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/" + DeliveryJournal.fileName
        let bytes = Array("msgpipe journal 1\nsomething else".utf8)
        try write(bytes, to: path)
        #expect(throws: InboxError.foreignJournal(path: path)) {
            _ = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        }
        #expect(try read(path) == bytes)
    }

    @Test func aSecondJournalOnTheSameDirectoryIsRefused() throws {
        let directory = try temporaryDirectory()
        let first = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        #expect(throws: InboxError.inUse(directory: directory)) {
            _ = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        }
        withExtendedLifetime(first) {}
    }

    @Test func theLedgerForgetsTheSessionUnusedLongestBeyondItsBound() {
        var ledger = DeliveryLedger(retainedSessions: 3)
        for session in UInt64(1)...3 { ledger.apply(.kept(session: session, id: 1, name: "")) }
        ledger.apply(.kept(session: 1, id: 2, name: ""))  // session 2 is now the one unused longest
        ledger.apply(.kept(session: 4, id: 1, name: ""))
        #expect(ledger.sessions.count == 3)
        #expect(!ledger.contains(session: 2, id: 1))
        #expect(ledger.contains(session: 1, id: 2) && ledger.contains(session: 3, id: 1) && ledger.contains(session: 4, id: 1))
    }

    @Test func theJournalIsRewrittenSmallOnceItHoldsTwiceItsSessions() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/" + DeliveryJournal.fileName
        do {
            let journal = try DeliveryJournal(directory: directory, retainedSessions: 4, logger: nil)
            for id in UInt32(1)...200 { try journal.append([.kept(session: UInt64(id % 6 + 1), id: id, name: "")]) }
        }
        let size = try read(path).count
        #expect(size <= DeliveryJournalReplay.header.count + (2 * 4 + 64 + 1) * 26)
        let reopened = try DeliveryJournal(directory: directory, retainedSessions: 4, logger: nil)
        #expect(reopened.contains(session: 200 % 6 + 1, id: 200))
        #expect(reopened.ledger.sessions.count == 4)
    }
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "msgpipe-store-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A new empty file in a new temporary directory, open for writing; the caller closes the descriptor.
func openedFile() throws -> (path: String, descriptor: Int32) {
    let path = try temporaryDirectory() + "/out"
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    try #require(descriptor >= 0)
    return (path, descriptor)
}

func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

func read(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}
