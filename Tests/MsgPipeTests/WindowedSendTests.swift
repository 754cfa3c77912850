import MsgPipe
import Synchronization
import TestSupport
import Testing

/// `MessagePipe.send(count:...)` over a unix socket: a run of messages with several in flight, in order, and
/// how it stops at a failure.
@Suite("windowed send")
struct WindowedSendTests {
    /// A listener and a central connected to it; `body` gets the central and the listener's side of it.
    static func withPipes(_ name: String, _ body: (MessagePipe, MessagePipe) async throws -> Void) async throws {
        let path = MessagePipeTests.socketPath(name)
        let server = try await MessagePipe.listen(path: path, options: .patientForTests)
        let central = try await MessagePipe.connect(to: "unix:\(path)")
        var centrals = server.centrals.makeAsyncIterator()
        let peripheralSide = try #require(await centrals.next())
        try await body(central, peripheralSide)
        await central.close()
        await server.close()
    }

    @Test("every message arrives in order; each acknowledgement is heard once, in order, with its size")
    func everyMessageInOrder() async throws {
        try await Self.withPipes("window") { central, listener in
            let messages = (0..<20).map { seededBytes(1_000 + $0 * 500, seed: UInt64($0)) }
            let heard = Mutex<[(Int, Int)]>([])
            // The listener reads as the messages come: its bounded inbox paces the sender.
            let receiving = Task {
                var bodies: [[UInt8]] = []
                for await message in listener.messages {
                    bodies.append(message.bytes)
                    if bodies.count == messages.count { break }
                }
                return bodies
            }
            let outcome = await central.send(count: messages.count, window: .init(messages: 4, bytes: 8_000)) {
                messages[$0]
            } onAcknowledged: { index, bytes, _ in heard.withLock { $0.append((index, bytes)) } }
            #expect(outcome.acknowledged == 20 && outcome.failure == nil)
            #expect(heard.withLock { $0.map(\.0) } == Array(0..<20))
            #expect(heard.withLock { $0.map(\.1) } == messages.map(\.count))
            #expect(await receiving.value == messages)
        }
    }

    struct Unreadable: Error {}

    @Test("a body that fails stops the run after what was in flight is acknowledged")
    func aBodyFailureStopsAfterSettling() async throws {
        try await Self.withPipes("body") { central, _ in
            let outcome = await central.send(count: 5) { index in
                if index == 3 { throw Unreadable() }
                return [UInt8(index)]
            }
            #expect(outcome.acknowledged == 3)
            guard case let .body(index, error)? = outcome.failure else {
                Issue.record("expected the body's failure, got \(String(describing: outcome.failure))")
                return
            }
            #expect(index == 3 && error is Unreadable)
        }
    }

    @Test("a deadline already past fails the first submit: nothing is sent")
    func aPassedDeadlineFailsTheSend() async throws {
        try await Self.withPipes("deadline") { central, _ in
            let outcome = await central.send(count: 2, deadline: .now - .seconds(1)) { _ in [1, 2, 3] }
            #expect(outcome.acknowledged == 0)
            guard case let .send(index, error)? = outcome.failure else {
                Issue.record("expected a send failure, got \(String(describing: outcome.failure))")
                return
            }
            #expect(index == 0)
            #expect(error as? TransportError == .deadlineExceeded(messageID: nil))
        }
    }
}
