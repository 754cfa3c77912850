import Foundation
import MsgPipe
import Synchronization
import TestSupport
import Testing

/// The receiving loop: what a server's centrals or a central's pipes send is kept durably, acknowledged only
/// once kept, and the loop says why it ended.
@Suite struct InboxReceivingTests {
    @Test func twoCentralsMessagesAreKeptAsFilesAndTheLimitEndsTheLoop() async throws {
        let directory = try temporaryDirectory()
        let (server, path) = try await holdingServer()
        var inboxOptions = MessageInbox<MessageDirectory>.Options()
        inboxOptions.limit = 4
        let inbox = try MessageInbox(directory: directory, options: inboxOptions)
        let subscribed = Mutex<[String]>([])
        let receiving = Task {
            await inbox.receive(from: server, onPipe: { central in subscribed.withLock { $0.append(central.peer) } }) { message, _ in
                MessageDirectory.Item(bytes: message.bytes)
            }
        }
        let first = try await MessagePipe.connect(to: "unix:\(path)")
        let second = try await MessagePipe.connect(to: "unix:\(path)")
        // Each send returns once acknowledged, and the inbox acknowledges only what it kept.
        try await first.send([1, 1], timeout: .seconds(30))
        try await second.send([2, 2], timeout: .seconds(30))
        #expect(try messageFiles(directory).values.sorted { $0[0] < $1[0] } == [[1, 1], [2, 2]])
        try await first.send([3], timeout: .seconds(30))
        try await second.send([4], timeout: .seconds(30))
        let end = await receiving.value
        guard case .limitReached = end else {
            Issue.record("the loop ended with \(end), not at the limit")
            return
        }
        await inbox.close()
        #expect(try messageFiles(directory).count == 4)
        #expect(subscribed.withLock { $0.count } == 2)
        // A fifth message is past the limit: never acknowledged (the server was closed at the limit).
        await #expect(throws: (any Error).self) { try await first.send([5], timeout: .seconds(2)) }
        await first.close()
        await second.close()
    }

    @Test func aFailingOutputEndsTheLoopAndItsMessageIsNeverAcknowledged() async throws {
        let (server, path) = try await holdingServer()
        let output = GatedOutput()
        output.failure.withLock { $0 = .io("cannot write: No space left on device") }
        let inbox = try MessageInbox(output: output, journalDirectory: nil)
        let pipe = try await MessagePipe.connect(to: "unix:\(path)")
        let receiving = Task { await inbox.receive(from: server) { message, _ in message.bytes } }
        await #expect(throws: (any Error).self) { try await pipe.send([9], timeout: .seconds(2)) }
        let end = await receiving.value
        guard case let .failed(error) = end else {
            Issue.record("the loop ended with \(end), not with the output's failure")
            return
        }
        #expect(error == .io("cannot write: No space left on device"))
        #expect(inbox.keptCount == 0)
        await pipe.close()
        await server.close()
        await inbox.close()
    }
}

/// A server on a fresh UNIX socket that holds each acknowledgement until the message is accepted, and its path.
func holdingServer() async throws -> (server: PipeServer, path: String) {
    let path = "/tmp/msgpipe-store-\(getpid())-\(UInt32.random(in: 0 ... .max)).sock"
    var options = MessagePipe.Options.patientForTests
    options.holdsAcknowledgements = true
    return (try await MessagePipe.listen(path: path, options: options), path)
}
