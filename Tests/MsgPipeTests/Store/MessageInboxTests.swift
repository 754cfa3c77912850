import Foundation
@_spi(Fuzzing) @testable import MsgPipe
import Synchronization
import Testing

/// The inbox: a message is acknowledged only once kept, kept once across reopenings, written in batches.
@Suite struct MessageInboxTests {
    @Test func aMessageKeptBeforeIsAcceptedAndNotWrittenAgainAfterAReopen() async throws {
        let directory = try temporaryDirectory()
        let first = try MessageInbox(directory: directory)
        let one = try await first.keep(PipeMessage(bytes: [1], id: 1, senderSession: 42))
        let two = try await first.keep(PipeMessage(bytes: [2], id: 2, senderSession: 42))
        #expect(one == InboxReceipt(name: "00000001.msg", isDuplicate: false, index: 1))
        #expect(two.name == "00000002.msg")
        await first.close()
        // The sender never saw 2 acknowledged and sends it again, then 3; another session's 2 is new.
        let second = try MessageInbox(directory: directory)
        #expect(try await second.keep(PipeMessage(bytes: [2], id: 2, senderSession: 42)).isDuplicate)
        #expect(try await second.keep(PipeMessage(bytes: [3], id: 3, senderSession: 42)).name == "00000003.msg")
        #expect(try await second.keep(PipeMessage(bytes: [9], id: 2, senderSession: 43)).name == "00000004.msg")
        await second.close()
        #expect(try messageFiles(directory) == ["00000001.msg": [1], "00000002.msg": [2], "00000003.msg": [3], "00000004.msg": [9]])
    }

    @Test func messagesThatArriveTogetherAreWrittenAsOneBatch() async throws {
        let output = GatedOutput()
        let inbox = try MessageInbox(output: output, journalDirectory: try temporaryDirectory())
        output.gate.withLock { $0 = true }
        for id in UInt32(1)...50 { inbox.submit(PipeMessage(bytes: [UInt8(id)], id: id, senderSession: 1), as: [UInt8(id)]) }
        output.gate.withLock { $0 = false }
        await inbox.close()
        #expect(inbox.keptCount == 50)
        // The first message may have been taken alone before the rest arrived; the rest went as one batch.
        let batches = output.batches.withLock { $0 }
        #expect(batches.count <= 2)
        #expect(batches.flatMap { $0 } == (1...50).map { [UInt8($0)] })
    }

    @Test func aBatchOfFilesIsKeptInArrivalOrderWithNothingLeftBehind() async throws {
        let directory = try temporaryDirectory()
        let inbox = try MessageInbox(directory: directory)
        for id in UInt32(1)...20 {
            inbox.submit(PipeMessage(bytes: [UInt8(id)], id: id, senderSession: 9), as: MessageDirectory.Item(bytes: [UInt8(id)]))
        }
        await inbox.close()
        #expect(try messageFiles(directory) == Dictionary(uniqueKeysWithValues: (1...20).map { (MessageDirectory.fileName($0), [UInt8($0)]) }))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".part") }.isEmpty)
        let journal = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        #expect(journal.contains(session: 9, id: 20) && !journal.contains(session: 9, id: 21))
    }

    @Test func anOutputThatFailsKeepsNothingAndRefusesWhatFollows() async throws {
        let directory = try temporaryDirectory()
        let output = GatedOutput()
        output.failure.withLock { $0 = .io("cannot write: No space left on device") }
        let failures = Mutex<[InboxError]>([])
        var options = MessageInbox<GatedOutput>.Options()
        options.onFailure = { error in failures.withLock { $0.append(error) } }
        let inbox = try MessageInbox(output: output, journalDirectory: directory, options: options)
        await #expect(throws: InboxError.io("cannot write: No space left on device")) {
            try await inbox.keep(PipeMessage(bytes: [1], id: 1, senderSession: 5), as: [1])
        }
        await #expect(throws: InboxError.io("cannot write: No space left on device")) {
            try await inbox.keep(PipeMessage(bytes: [2], id: 2, senderSession: 5), as: [2])
        }
        #expect(failures.withLock { $0 } == [.io("cannot write: No space left on device")])
        await inbox.close()
        let journal = try DeliveryJournal(directory: directory, retainedSessions: 10, logger: nil)
        #expect(!journal.contains(session: 5, id: 1))
    }

    @Test func pastItsLimitTheInboxKeepsNothing() async throws {
        var options = MessageInbox<MessageDirectory>.Options()
        options.limit = 1
        let directory = try temporaryDirectory()
        let inbox = try MessageInbox(directory: directory, options: options)
        try await inbox.keep(PipeMessage(bytes: [1], id: 1, senderSession: 5))
        await #expect(throws: InboxError.closed) { try await inbox.keep(PipeMessage(bytes: [2], id: 2, senderSession: 5)) }
        await inbox.close()
        #expect(try messageFiles(directory) == ["00000001.msg": [1]])
    }

    @Test func openingPublishesWhatTheJournalRecordedAndRemovesWhatItDidNot() async throws {
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/phone", withIntermediateDirectories: true)
        try write([1], to: directory + "/phone/.00000001.msg.part")
        try write([2], to: directory + "/phone/.00000002.msg.part")
        try write(
            DeliveryJournalReplay.header + DeliveryRecord.kept(session: 3, id: 1, name: "phone/00000001.msg").encoded(),
            to: directory + "/" + DeliveryJournal.fileName)
        let inbox = try MessageInbox(directory: directory)
        // Recovered: 1 is kept (a resend is a duplicate); 2 was never journaled, so its sender sends it again.
        #expect(try await inbox.keep(PipeMessage(bytes: [1], id: 1, senderSession: 3), folder: "phone").isDuplicate)
        #expect(try await inbox.keep(PipeMessage(bytes: [2], id: 2, senderSession: 3), folder: "phone").name == "phone/00000002.msg")
        await inbox.close()
        #expect(try messageFiles(directory + "/phone") == ["00000001.msg": [1], "00000002.msg": [2]])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/phone").sorted() == ["00000001.msg", "00000002.msg"])
    }

    @Test func aSecondInboxOnTheSameDirectoryIsRefusedWithTheRemedy() async throws {
        let directory = try temporaryDirectory()
        let first = try MessageInbox(directory: directory)
        #expect(throws: InboxError.inUse(directory: directory)) { _ = try MessageInbox(directory: directory) }
        #expect(InboxError.inUse(directory: directory).description.contains("give this one another directory"))
        await first.close()
        let again = try MessageInbox(directory: directory)
        await again.close()
    }

    /// Over a real pipe: the sender's `send` completes only once the message is in its file, and a message the
    /// inbox could not keep is never acknowledged.
    @Test func aSendCompletesOnlyOnceItsMessageIsKept() async throws {
        let directory = try temporaryDirectory()
        let (server, path) = try await holdingServer()
        let output = GatedOutput(directory: directory)
        let inbox = try MessageInbox(output: output, journalDirectory: directory)
        let serving = Task {
            for await central in server.centrals {
                for await message in central.messages { inbox.submit(message, as: message.bytes) }
            }
        }
        let pipe = try await MessagePipe.connect(to: "unix:\(path)")
        try await pipe.send([1, 2, 3], timeout: .seconds(30))
        #expect(output.batches.withLock { $0 } == [[[1, 2, 3]]])
        // The output fails from now on: the next send is never acknowledged.
        output.failure.withLock { $0 = .io("cannot write: No space left on device") }
        await #expect(throws: (any Error).self) { try await pipe.send([4], timeout: .seconds(2)) }
        #expect(inbox.keptCount == 1)
        await pipe.close()
        await server.close()
        serving.cancel()
        await inbox.close()
    }
}

/// An in-memory output that records each batch, can hold a batch until its gate opens, and can fail.
final class GatedOutput: InboxOutput {
    let gate = Mutex(false)
    let failure = Mutex<InboxError?>(nil)
    let batches = Mutex<[[[UInt8]]]>([])
    let directory: String?

    init(directory: String? = nil) { self.directory = directory }

    func write(_ items: [[UInt8]]) throws(InboxError) -> [String] {
        while gate.withLock({ $0 }) { usleep(1_000) }
        if let failure = failure.withLock({ $0 }) { throw failure }
        batches.withLock { $0.append(items) }
        return items.map { _ in "" }
    }

    func publish(_ names: [String]) throws(InboxError) {}
    func discard(_ names: [String]) {}
    func recover(publishing names: [String]) throws(InboxError) {}
}

/// The message files in `directory` (not the hidden journal, lock or temporary files) and their bytes.
func messageFiles(_ directory: String) throws -> [String: [UInt8]] {
    var files: [String: [UInt8]] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasSuffix(".msg") && !name.hasPrefix(".") {
        files[name] = try read(directory + "/" + name)
    }
    return files
}
