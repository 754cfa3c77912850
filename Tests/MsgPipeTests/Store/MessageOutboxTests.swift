import Foundation
@_spi(Fuzzing) @testable import MsgPipe
import PropertyBased
import Synchronization
import TestSupport
import Testing
import BLELink
import Secure
import Transport

/// The outbox: an enqueue is durable and whole, limits refuse without dropping, ids and the session survive a
/// reopen and are never given twice, delivery takes a message out only once acknowledged.
@Suite struct MessageOutboxTests {
    @Test("the state file's bytes: header, then one S record (session, highest id taken out)")
    func stateVector() throws {
        let state = OutboxState(session: 0x0102_0304_0506_0708, removedThrough: 5)
        let expected = Array("msgpipe outbox 1\n".utf8) + hex("4f530000000c010203040506070800000005 49e54442")
        #expect(state.encoded() == expected)
        #expect(try OutboxState(decoding: expected) == state)
    }

    @Test("property: states round-trip; a cut, a flipped byte or trailing bytes are refused, never trap")
    func statesRoundTrip() async {
        await propertyCheck(
            count: 200, input: Gen<UInt64>.value(in: 1...UInt64.max), Gen<UInt32>.value(in: 0...UInt32.max),
            Gen<Int>.value(in: 0...21), Gen<UInt8>.value(in: 0...255).array(of: 0...40)
        ) { session, removed, position, garbage in
            let state = OutboxState(session: session, removedThrough: removed)
            let bytes = state.encoded()
            #expect((try? OutboxState(decoding: bytes)) == state)
            #expect(throws: OutboxState.Unreadable.corrupt) { try OutboxState(decoding: Array(bytes.dropLast())) }
            #expect(throws: OutboxState.Unreadable.corrupt) { try OutboxState(decoding: bytes + [0]) }
            var flipped = bytes
            flipped[OutboxState.header.count + position] ^= 0x01
            #expect(throws: OutboxState.Unreadable.self) { try OutboxState(decoding: flipped) }
            _ = try? OutboxState(decoding: garbage)
            _ = try? OutboxState(decoding: OutboxState.header + garbage)
        }
    }

    @Test func aReopenedOutboxHoldsItsMessagesSessionAndNextID() throws {
        let directory = try temporaryDirectory()
        let first = try MessageOutbox(directory: directory)
        #expect(try first.enqueue([1]) == MessageOutbox.Entry(id: 1, size: 1))
        #expect(try first.enqueue([2, 2]).id == 2)
        let session = first.senderSession
        #expect(session.nextMessageID == 1)
        first.close()
        let second = try MessageOutbox(directory: directory)
        #expect(second.senderSession == session)
        #expect(second.entries.map(\.id) == [1, 2])
        #expect(try second.read(second.entries[1]) == [2, 2])
        #expect(try second.enqueue([3]).id == 3)
    }

    @Test("a crash mid-enqueue leaves a .part file: opening removes it, its id goes to the next message")
    func aHalfWrittenMessageIsNeverQueued() throws {
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        try outbox.enqueue([1])
        outbox.close()
        try write([9, 9], to: directory + "/.0000000002.msg.part")
        let reopened = try MessageOutbox(directory: directory)
        #expect(reopened.entries.map(\.id) == [1])
        #expect(!FileManager.default.fileExists(atPath: directory + "/.0000000002.msg.part"))
        #expect(try reopened.enqueue([2]).id == 2)
    }

    @Test("an acknowledged message whose removal was lost is removed at opening, and its id is not given again")
    func idsAreNeverGivenTwice() throws {
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        try outbox.enqueue([1])
        try outbox.enqueue([2])
        outbox.close()
        // As after a power cut between recording 2 as taken out and removing its file (the file came back).
        let session = try OutboxState(decoding: try read(directory + "/" + OutboxState.fileName)).session
        try write(OutboxState(session: session, removedThrough: 2).encoded(), to: directory + "/" + OutboxState.fileName)
        let reopened = try MessageOutbox(directory: directory)
        #expect(reopened.entries.isEmpty)
        #expect(try messageFiles(directory).isEmpty)
        #expect(try reopened.enqueue([3]).id == 3)
        #expect(reopened.senderSession == SenderSession(id: session, nextMessageID: 3))
    }

    @Test("a full outbox refuses the new message with the numbers, and drops nothing it holds")
    func limitsRefuseWithoutDropping() throws {
        let directory = try temporaryDirectory()
        var options = MessageOutbox.Options()
        options.maximumBytes = 10
        options.maximumMessages = 3
        options.maximumMessageSize = 8
        let outbox = try MessageOutbox(directory: directory, options: options)
        try outbox.enqueue(Array(repeating: 1, count: 6))
        #expect(throws: OutboxError.full(directory: directory, messages: 1, bytes: 6, size: 5)) {
            try outbox.enqueue(Array(repeating: 2, count: 5))
        }
        #expect(throws: OutboxError.tooLarge(size: 9, limit: 8)) { try outbox.enqueue(Array(repeating: 3, count: 9)) }
        try outbox.enqueue([4])
        try outbox.enqueue([5])
        #expect(throws: OutboxError.self) { try outbox.enqueue([6]) }
        #expect(outbox.entries.map(\.id) == [1, 2, 3])
        #expect(try outbox.read(outbox.entries[0]) == Array(repeating: 1, count: 6))
        #expect("\(OutboxError.full(directory: "q", messages: 1, bytes: 6, size: 5))".contains("not queued"))
    }

    @Test("a batch is queued whole, ids in order, or not at all: past the bytes, the count or the message size")
    func aBatchIsAllOrNothing() throws {
        let directory = try temporaryDirectory()
        var options = MessageOutbox.Options()
        options.maximumBytes = 10
        options.maximumMessages = 4
        options.maximumMessageSize = 8
        let outbox = try MessageOutbox(directory: directory, options: options)
        #expect(try outbox.enqueue(contentsOf: [[1], [2, 2]]) == [.init(id: 1, size: 1), .init(id: 2, size: 2)])
        #expect(throws: OutboxError.batchFull(directory: directory, messages: 2, bytes: 3, count: 2, size: 8)) {
            try outbox.enqueue(contentsOf: [[3, 3, 3, 3], [4, 4, 4, 4]])
        }
        #expect(throws: OutboxError.batchFull(directory: directory, messages: 2, bytes: 3, count: 3, size: 3)) {
            try outbox.enqueue(contentsOf: [[5], [6], [7]])
        }
        #expect(throws: OutboxError.tooLarge(size: 9, limit: 8)) { try outbox.enqueue(contentsOf: [[8], Array(repeating: 9, count: 9)]) }
        #expect(throws: OutboxError.full(directory: directory, messages: 2, bytes: 3, size: 8)) {
            try outbox.enqueue(contentsOf: [Array(repeating: 9, count: 8)])
        }
        #expect(try outbox.enqueue(contentsOf: []) == [])
        // Nothing of a refused batch was queued or left on disk; the next batch gets the next ids.
        #expect(outbox.entries.map(\.id) == [1, 2])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".msg") }.sorted()
            == ["0000000001.msg", "0000000002.msg"])
        #expect(try outbox.enqueue(contentsOf: [[3], [4, 4]]).map(\.id) == [3, 4])
        outbox.close()
        let reopened = try MessageOutbox(directory: directory)
        #expect(reopened.entries.map(\.id) == [1, 2, 3, 4])
        #expect(try reopened.read(reopened.entries[3]) == [4, 4])
        #expect("\(OutboxError.batchFull(directory: "q", messages: 2, bytes: 3, count: 2, size: 8))".contains("none of them"))
    }

    @Test("a batch whose write fails leaves nothing: no message file, no .part, no id used")
    func aFailedBatchWriteLeavesNothing() throws {
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        try outbox.enqueue([1])
        // The second message's name is taken by a directory: its rename fails after the first was renamed.
        try FileManager.default.createDirectory(atPath: directory + "/0000000003.msg/x", withIntermediateDirectories: true)
        #expect(throws: OutboxError.self) { try outbox.enqueue(contentsOf: [[2], [3], [4]]) }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.contains("0000000002.msg"), "\(names)")
        #expect(!names.contains { $0.hasSuffix(".part") }, "\(names)")
        #expect(outbox.entries.map(\.id) == [1])
    }

    @Test func aSecondOutboxOnTheSameDirectoryIsRefusedWithTheRemedy() throws {
        let directory = try temporaryDirectory()
        let first = try MessageOutbox(directory: directory)
        #expect(throws: OutboxError.inUse(directory: directory)) { try MessageOutbox(directory: directory) }
        #expect("\(OutboxError.inUse(directory: directory))".contains("another msgpipe sender"))
        first.close()
        _ = try MessageOutbox(directory: directory)
    }

    @Test("a foreign or damaged state file is refused and left as it was")
    func aForeignOrDamagedStateIsRefusedUnchanged() throws {
        for (bytes, isForeign) in [(Array("not an outbox\n".utf8), true), (OutboxState.header + [0x4f, 0x53, 0], false)] {
            let directory = try temporaryDirectory()
            let path = directory + "/" + OutboxState.fileName
            try write(bytes, to: path)
            #expect(throws: isForeign ? OutboxError.foreignState(path: path) : OutboxError.corruptState(path: path)) {
                try MessageOutbox(directory: directory)
            }
            #expect(try read(path) == bytes)
        }
    }

    @Test("delivered in order over a real pipe, each taken out once acknowledged; a reopened outbox goes on in the same session")
    func deliversInOrderAndTakesOut() async throws {
        let (server, path, received) = try await Self.receiver()
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        for byte in UInt8(1)...5 { try outbox.enqueue(Array(repeating: byte, count: Int(byte) * 1000)) }
        let delivered = Mutex<[(id: UInt32, elapsed: Duration)]>([])
        let started = ContinuousClock.now
        let report = try await outbox.deliver(to: "unix:\(path)", options: MessagePipe.Options()) { entry, elapsed in
            delivered.withLock { $0.append((entry.id, elapsed)) }
        }
        let took = started.duration(to: .now)
        #expect(report == MessageOutbox.Report(delivered: 5, refused: []))
        #expect(delivered.withLock { $0.map(\.id) } == [1, 2, 3, 4, 5])
        // Each is the time since the one before (the first: since the call), so together they are the call's.
        let elapsed = delivered.withLock { $0.map(\.elapsed) }
        #expect(elapsed.allSatisfy { $0 >= .zero } && elapsed[0] > .zero)
        #expect(elapsed.reduce(.zero, +) <= took)
        #expect(outbox.entries.isEmpty)
        #expect(try messageFiles(directory).isEmpty)
        let session = outbox.senderSession.id
        outbox.close()
        let reopened = try MessageOutbox(directory: directory)
        try reopened.enqueue([6])
        _ = try await reopened.deliver(to: "unix:\(path)", options: MessagePipe.Options())
        let seen = received.all
        #expect(received.again.isEmpty, "nothing sent twice")
        #expect(seen.map(\.id) == [1, 2, 3, 4, 5, 6])
        #expect(Set(seen.map(\.session)) == [session])
        #expect(seen.map(\.size) == [1000, 2000, 3000, 4000, 5000, 1])
        await server.close()
    }

    @Test("a message the peer refuses for good is set aside in refused/, the others are delivered")
    func aRefusedMessageIsSetAside() async throws {
        var serverOptions = MessagePipe.Options()
        serverOptions.maximumMessageSize = 4000
        let (server, path, received) = try await Self.receiver(serverOptions)
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        try outbox.enqueue([1])
        try outbox.enqueue(Array(repeating: 2, count: 5000))
        try outbox.enqueue([3])
        let report = try await outbox.deliver(to: "unix:\(path)", options: MessagePipe.Options())
        #expect(report.delivered == 2)
        #expect(report.refused.map(\.id) == [2])
        #expect(report.refused.first?.path == directory + "/refused/0000000002.msg")
        #expect(try read(directory + "/refused/0000000002.msg") == Array(repeating: 2, count: 5000))
        #expect(received.all.map(\.size) == [1, 1])
        #expect(received.again.isEmpty, "nothing sent twice")
        outbox.close()
        // Its id is not given again.
        #expect(try MessageOutbox(directory: directory).enqueue([4]).id == 4)
        await server.close()
    }

    @Test("with end-to-end keys: delivered in order, each sealed with its origin (the outbox's session and id), also after a reopen")
    func sealedMessagesCarryTheirOrigin() async throws {
        let keys = PipeKeys.credentials(.preSharedKey(PreSharedKey()))
        var serverOptions = MessagePipe.Options()
        serverOptions.keys = keys
        let (server, path, received) = try await Self.receiver(serverOptions)
        let directory = try temporaryDirectory()
        var options = MessagePipe.Options()
        options.keys = keys
        let outbox = try MessageOutbox(directory: directory)
        for byte in UInt8(1)...40 { try outbox.enqueue(Array(repeating: byte, count: Int(byte) * 100)) }
        let session = outbox.senderSession.id
        #expect(try await outbox.deliver(to: "unix:\(path)", options: options).delivered == 40)
        outbox.close()
        // A new process: a new Transport session and handshake, the same origin session, ids going on.
        let reopened = try MessageOutbox(directory: directory)
        try reopened.enqueue([41])
        #expect(try await reopened.deliver(to: "unix:\(path)", options: options).delivered == 1)
        let seen = received.all
        #expect(received.again.isEmpty, "nothing sent twice")
        #expect(seen.map(\.id) == Array(1...41))
        #expect(Set(seen.map(\.session)) == [session])
        #expect(seen.map(\.size) == (1...40).map { $0 * 100 } + [1])
        #expect(try messageFiles(directory).isEmpty)
        await server.close()
    }

    @Test("a peer that wants keys we lack, or holds another key: delivery stops at once, every message stays queued",
        arguments: [false, true])
    func notAuthenticatedStopsWithEverythingQueued(keyed: Bool) async throws {
        var serverOptions = MessagePipe.Options()
        serverOptions.keys = .credentials(.preSharedKey(PreSharedKey()))
        let (server, path, received) = try await Self.receiver(serverOptions)
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        try outbox.enqueue([1])
        try outbox.enqueue([2])
        var options = MessagePipe.Options()
        if keyed { options.keys = .credentials(.preSharedKey(PreSharedKey())) }
        options.reconnect = ReconnectBackoff(initial: .milliseconds(10), maximum: .milliseconds(20), attempts: 50)
        let connections = Atomic<Int>(0)
        options.onLinkEvent = { event, _ in
            if case .connected = event { connections.add(1, ordering: .relaxed) }
        }
        let error = await #expect(throws: OutboxError.self) {
            _ = try await outbox.deliver(to: "unix:\(path)", options: options)
        }
        guard case let .notAuthenticated(remaining, _)? = error else {
            Issue.record("expected notAuthenticated, got \(String(describing: error))")
            return
        }
        #expect(remaining == 2)
        #expect(outbox.entries.map(\.id) == [1, 2])
        #expect(received.all.isEmpty)
        // One connection; a second only when the pipe's own reconnect raced the refusal (the peer closes a second
        // after it). An outbox that retried would connect again and again: 50 attempts, 10 to 20 ms apart.
        #expect(connections.load(ordering: .relaxed) <= 2, "it retried instead of stopping")
        await server.close()
    }

    @Test("with end-to-end keys across a server restart: the messages the old server never kept go again, each kept once")
    func sealedDeliveryGoesOnAfterTheServerRestarts() async throws {
        let keys = PipeKeys.credentials(.preSharedKey(PreSharedKey()))
        var serverOptions = MessagePipe.Options()
        serverOptions.keys = keys
        serverOptions.holdsAcknowledgements = true
        let received = Received()
        // The first server keeps (records, then accepts) 10 messages and reads no more: the rest stay in flight.
        let (first, path, _) = try await Self.receiver(serverOptions, into: received, keeping: 10)
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        for byte in UInt8(1)...40 { try outbox.enqueue(Array(repeating: byte, count: 1000 + Int(byte))) }
        let session = outbox.senderSession.id
        var options = MessagePipe.Options()
        options.keys = keys
        options.reconnect = ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200), attempts: 20)
        let delivering = Task { try await outbox.deliver(to: "unix:\(path)", options: options) }
        while received.all.count < 10 { try await Task.sleep(for: .milliseconds(10)) }
        await first.close()
        let keptFirst = Set(received.all.map(\.id))
        let (second, _, _) = try await Self.receiver(serverOptions, path: path, into: received)
        let report = try await delivering.value
        #expect(report.delivered == 40)
        #expect(report.refused.isEmpty)
        let seen = received.all
        #expect(seen.map(\.id) == Array(1...40), "each message kept once, in order")
        // Sent again, and known by its origin, only when the first server kept it and its acknowledgement was lost
        // with the restart.
        #expect(Set(received.again).isSubset(of: keptFirst), "\(received.again) sent again")
        #expect(Set(seen.map(\.session)) == [session])
        #expect(try messageFiles(directory).isEmpty)
        outbox.close()
        await second.close()
    }

    @Test("a peer that is not there: delivery gives up after the attempts, every message stays queued")
    func anAbsentPeerLeavesEverythingQueued() async throws {
        let directory = try temporaryDirectory()
        let outbox = try MessageOutbox(directory: directory)
        try outbox.enqueue([1])
        var options = MessagePipe.Options()
        options.reconnect = ReconnectBackoff(initial: .milliseconds(10), maximum: .milliseconds(20), attempts: 2)
        await #expect(throws: OutboxError.self) {
            _ = try await outbox.deliver(to: "unix:/tmp/msgpipe-nobody-\(getpid()).sock", options: options)
        }
        #expect(outbox.entries.map(\.id) == [1])
    }

    /// What a test receiver saw: each message's session, id and size, in order; and the ids it was sent again
    /// after it kept them (a journal's duplicates: kept once, acknowledged again).
    final class Received: Sendable {
        private let seen = Mutex<(kept: [(session: UInt64, id: UInt32, size: Int)], again: [UInt32])>(([], []))
        func append(_ message: (session: UInt64, id: UInt32, size: Int)) {
            seen.withLock { seen in
                if seen.kept.contains(where: { $0.session == message.session && $0.id == message.id }) {
                    seen.again.append(message.id)
                } else {
                    seen.kept.append(message)
                }
            }
        }
        var all: [(session: UInt64, id: UInt32, size: Int)] { seen.withLock { $0.kept } }
        var again: [UInt32] { seen.withLock { $0.again } }
    }

    /// A listener on a fresh UNIX socket (or `path`) that records each message's session, id and size in `received`,
    /// and accepts it; after `keeping` messages (nil: never) it reads no more.
    static func receiver(
        _ options: MessagePipe.Options = MessagePipe.Options(), path given: String? = nil, into received: Received = Received(),
        keeping limit: Int? = nil
    ) async throws -> (PipeServer, String, Received) {
        let path = given ?? "/tmp/msgpipe-outbox-\(getpid())-\(UInt32.random(in: 0 ... .max)).sock"
        var options = options
        // Hang guards, not the product's bounds: a starved central's hello and handshake may come late.
        options.helloTimeout = hangGuard
        options.handshakeTimeout = hangGuard
        let server = try await MessagePipe.listen(path: path, options: options)
        Task {
            for await central in server.centrals {
                Task {
                    for await message in central.messages {
                        if let limit, received.all.count >= limit { return }
                        received.append((message.senderSession ?? 0, message.id ?? 0, message.bytes.count))
                        await message.accept()
                    }
                }
            }
        }
        return (server, path, received)
    }
}

func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter(\.isHexDigit))
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0 ... $0 + 1]), radix: 16)! }
}
