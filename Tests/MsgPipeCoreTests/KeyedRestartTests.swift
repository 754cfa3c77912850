import MemoryLinks
import MsgPipeCore
import Synchronization
import TestSupport
import Testing
import Transport

/// A keyed central whose secure session the server forgot (it restarted, or the central's session expired there)
/// while the central kept its Transport session: the central learns it from the server's new Transport session,
/// runs a new handshake on the same Transport session, and goes on (PROTOCOL.md 6.8).
@Suite("a keyed central after its server forgot the session")
struct KeyedRestartTests {
    let key = PreSharedKey()

    func options(holding: Bool = false, resumeWindow: Duration? = nil) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        options.keys = .credentials(.preSharedKey(key))
        options.handshakeTimeout = hangGuard
        options.helloTimeout = hangGuard
        options.holdsAcknowledgements = holding
        if let resumeWindow { options.resumeWindow = resumeWindow }
        options.reconnect = ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200), attempts: .max)
        return options
    }

    /// How long a step that needs only a reconnect and a handshake may take on two loaded cores before the test
    /// calls it lost (it fails then instead of hanging).
    static let patience: Duration = .seconds(60)

    /// `body`'s value, or nil when it did not come within `limit` (the body is left running).
    static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
        let first = FirstOutcome<T?>()
        return await withCheckedContinuation { continuation in
            first.wait(continuation)
            Task { first.resolve(await body()) }
            Task {
                try? await Task.sleep(for: limit)
                first.resolve(nil)
            }
        }
    }

    /// The next central pipe `server` hands out, within ``patience``.
    static func nextCentral(of server: PipeServer) async -> MessagePipe? {
        await within(patience) { await server.centrals.first { _ in true } }
    }

    /// The next message of `pipe`, within ``patience``.
    static func nextMessage(of pipe: MessagePipe) async -> PipeMessage? {
        await within(patience) { await pipe.messages.first { _ in true } }
    }

    @Test("the server restarted while the central was idle: the central renews by itself, its next send is delivered once")
    func serverRestartedWhileIdle() async throws {
        let stack = MemoryStack()
        let first = try await MessagePipe.serve(at: "kiosk", over: stack, options: options())
        let central = try await MessagePipe.connect(to: "kiosk", over: stack, options: options())
        try await central.send(Array("before".utf8), timeout: hangGuard)
        let old = try #require(await Self.nextCentral(of: first))
        #expect(await Self.nextMessage(of: old)?.bytes == Array("before".utf8))
        await first.close()
        let second = try await MessagePipe.serve(at: "kiosk", over: stack, options: options())
        let renewed = try #require(await Self.nextCentral(of: second), "the central ran no new handshake")
        try await central.send(Array("after".utf8), timeout: hangGuard)
        let reading = Task { await renewed.messages.prefix(2).reduce(into: []) { $0.append($1.bytes) } }
        try await central.send(Array("then".utf8), timeout: hangGuard)
        #expect(await Self.within(Self.patience) { await reading.value } == [Array("after".utf8), Array("then".utf8)])
        #expect(second.refusedHandshakes == 0, "a renewal is no refused handshake")
        #expect(central.rejection == nil)
        await central.close()
        await second.close()
    }

    @Test("the server restarted with a message in flight: the sender learns peerSessionReset, the new server never delivers it")
    func serverRestartedWithAMessageInFlight() async throws {
        let stack = MemoryStack()
        // Holding acknowledgements: the first server delivers the message and never acknowledges it.
        let first = try await MessagePipe.serve(at: "kiosk", over: stack, options: options(holding: true))
        let central = try await MessagePipe.connect(to: "kiosk", over: stack, options: options())
        let sending = Task { try await central.send(Array("in flight".utf8), timeout: hangGuard) }
        let old = try #require(await Self.nextCentral(of: first))
        #expect(await Self.nextMessage(of: old)?.bytes == Array("in flight".utf8))
        await first.close()
        let second = try await MessagePipe.serve(at: "kiosk", over: stack, options: options(holding: true))
        let outcome = try #require(await Self.within(Self.patience) { await sending.result }, "the send neither failed nor completed")
        #expect(throws: MessagePipeError.peerSessionReset(maybeDelivered: true)) { try outcome.get() }
        let renewed = try #require(await Self.nextCentral(of: second))
        let reading = Task { () -> [[UInt8]] in
            var seen: [[UInt8]] = []
            for await message in renewed.messages {
                seen.append(message.bytes)
                await message.accept()
                if seen.count == 1 { break }
            }
            return seen
        }
        try await central.send(Array("next".utf8), timeout: hangGuard)
        #expect(await Self.within(Self.patience) { await reading.value } == [Array("next".utf8)], "nothing sent again")
        #expect(second.refusedHandshakes == 0)
        await central.close()
        await second.close()
    }

    @Test("the central's session expired at the server (its resume window): a new handshake on the same server")
    func resumeWindowExpiredAtTheServer() async throws {
        let stack = MemoryStack()
        // The central comes back 250 ms after a drop at the soonest: past this window.
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: options(resumeWindow: .milliseconds(20)))
        let central = try await MessagePipe.connect(to: "kiosk", over: stack, options: options())
        try await central.send(Array("before".utf8), timeout: hangGuard)
        let old = try #require(await Self.nextCentral(of: server))
        #expect(await Self.nextMessage(of: old)?.bytes == Array("before".utf8))
        await stack.dropConnections()
        let renewed = try #require(await Self.nextCentral(of: server), "the central ran no new handshake")
        try await central.send(Array("after".utf8), timeout: hangGuard)
        #expect(await Self.nextMessage(of: renewed)?.bytes == Array("after".utf8))
        #expect(central.connections == 2)
        #expect(server.refusedHandshakes == 0)
        await central.close()
        await server.close()
    }

    @Test("refusals are unchanged: a wrong key fails the connect, a keyless central's send is rejected; both are counted")
    func refusalsStayRefusals() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: options())
        var wrong = options()
        wrong.keys = .credentials(.preSharedKey(PreSharedKey()))
        await #expect {
            _ = try await MessagePipe.connect(to: "kiosk", over: stack, options: wrong)
        } throws: { error in
            guard case MessagePipeError.notAuthenticated = error else { return false }
            return true
        }
        var keyless = MessagePipe.Options()
        keyless.reconnect.attempts = 0
        let stranger = try await MessagePipe.connect(to: "kiosk", over: stack, options: keyless)
        // Answered, not timed out: the rejection comes at once.
        await #expect {
            try await stranger.send(Array("pay 100".utf8), timeout: hangGuard)
        } throws: { error in
            guard case TransportError.rejectedByPeer(_, .notAuthenticated) = error else { return false }
            return true
        }
        await stranger.close()
        // The wrong key's handshake, maybe its reconnect refused by the backoff, then the keyless data.
        #expect(await Self.within(Self.patience) {
            while server.refusedHandshakes < 2 { try? await Task.sleep(for: .milliseconds(20)) }
            return true
        } == true)
        #expect(server.centrals.count == 0, "no pipe is handed out for either")
        await server.close()
    }
}

/// Resumes its waiter with the first outcome given; later ones are dropped.
final class FirstOutcome<T: Sendable>: Sendable {
    private let state = Mutex<(waiter: CheckedContinuation<T, Never>?, outcome: T?)>((nil, nil))

    func wait(_ continuation: CheckedContinuation<T, Never>) {
        let outcome = state.withLock { state -> T? in
            if state.outcome == nil { state.waiter = continuation }
            return state.outcome
        }
        if let outcome { continuation.resume(returning: outcome) }
    }

    func resolve(_ outcome: T) {
        let waiter = state.withLock { state -> CheckedContinuation<T, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            return state.waiter.take()
        }
        waiter?.resume(returning: outcome)
    }
}
