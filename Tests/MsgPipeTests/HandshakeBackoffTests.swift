import BLELink
import Exchange
@testable import MsgPipe
@testable import MsgPipeCore
import Secure
import TestSupport
import Testing

/// A central that keeps failing the end-to-end handshake waits longer each time; a success forgets it; the
/// book of addresses stays bounded.
@Suite struct HandshakeBackoffTests {
    let policy = ReconnectBackoff(initial: .seconds(1), maximum: .seconds(8), attempts: .max)
    let start = ContinuousClock.now

    @Test func eachFailureInARowDoublesTheWaitUpToTheMaximum() {
        let backoff = HandshakeBackoff(policy: policy)
        #expect(backoff.remaining(for: "AA", now: start) == nil, "a new address may try at once")
        var now = start
        var waits: [Duration] = []
        for _ in 0 ..< 6 {
            let wait = backoff.failed("AA", now: now)
            waits.append(wait)
            #expect(backoff.remaining(for: "AA", now: now + wait / 2) == wait / 2)
            now += wait
            #expect(backoff.remaining(for: "AA", now: now) == nil, "it may try again once its wait is over")
        }
        #expect(waits == [1, 2, 4, 8, 8, 8].map { Duration.seconds($0) })
        #expect(backoff.remaining(for: "BB", now: start) == nil, "another address is not slowed down")
    }

    @Test func aSuccessForgetsTheAddress() {
        let backoff = HandshakeBackoff(policy: policy)
        backoff.failed("AA", now: start)
        backoff.failed("AA", now: start)
        #expect(backoff.failures(of: "AA") == 2)
        backoff.succeeded("AA")
        #expect(backoff.failures(of: "AA") == 0)
        #expect(backoff.remaining(for: "AA", now: start) == nil)
        #expect(backoff.failed("AA", now: start) == .seconds(1))
    }

    @Test func aFloodOfAddressesKeepsTheBookBounded() {
        let backoff = HandshakeBackoff(policy: policy, capacity: 16)
        for index in 0 ..< 1000 {
            backoff.failed("addr-\(index)", now: start + .milliseconds(index))
        }
        let remembered = (0 ..< 1000).filter { backoff.failures(of: "addr-\($0)") > 0 }
        #expect(remembered.count == 16)
        #expect(remembered == Array(984 ..< 1000), "the most recent failures are the ones kept")
    }

    /// A keyed server on a fresh socket serving one central at a time (so every connection's peer is
    /// `unix:PATH`, one address for the backoff) that accepts `phone`, with `wait` as its first backoff; with
    /// the instants at which it counted each refused handshake.
    static func keyedServer(
        _ name: String, server: IdentityKey, phone: IdentityKey, wait: Duration
    ) async throws -> (server: PipeServer, path: String, refusals: AsyncStream<ContinuousClock.Instant>) {
        let path = MessagePipeTests.socketPath(name)
        var options = MessagePipe.Options()
        options.keys = .authorized(server, try AuthorizedKeyring(keys: AuthorizedKeys([.init(name: "phone", key: phone.publicKey)])))
        options.handshakeTimeout = hangGuard
        options.helloTimeout = hangGuard
        options.maximumCentrals = 1
        options.handshakeBackoff = ReconnectBackoff(initial: wait, maximum: .seconds(60), attempts: .max)
        let refusals = KeyedPipeTests.refusals(reportedBy: &options)
        return (try await MessagePipe.listen(path: path, options: options), path, refusals)
    }

    /// A stranger's key: its handshake fails (final, no retry), which starts the address's backoff.
    static func failHandshake(at path: String, server: IdentityKey) async {
        var options = MessagePipe.Options()
        options.keys = .credentials(.identity(IdentityKey(), peer: server.publicKey))
        options.handshakeTimeout = hangGuard
        options.reconnect.attempts = 0
        await #expect {
            _ = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        } throws: { error in
            guard case MessagePipeError.notAuthenticated = error else { return false }
            return true
        }
    }

    /// Fails a stranger's handshake at `listening` and waits until the server counted it (just after the
    /// stranger learned of it); returns that instant, at or before which the address's backoff starts.
    static func startBackoff(
        at listening: PipeServer, path: String, server: IdentityKey, refusals: AsyncStream<ContinuousClock.Instant>
    ) async throws -> ContinuousClock.Instant {
        await failHandshake(at: path, server: server)
        let counted = try #require(await nextEvent(of: refusals), "the failure is reported")
        #expect(listening.refusedHandshakes == 1, "the failure is counted")
        return counted
    }

    func phoneOptions(_ phone: IdentityKey, server: IdentityKey, attempts: Int) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        options.keys = .credentials(.identity(phone, peer: server.publicKey))
        options.handshakeTimeout = .seconds(20)
        options.reconnect = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1), attempts: attempts)
        return options
    }

    /// The server refuses the address for 3 s after a stranger's failed handshake. The right phone from the same
    /// address counts each refused connection as a failed attempt, so it waits longer each time (a handful of
    /// attempts, not one every 250 ms), and the refusals do not make the server's wait longer: it gets its pipe
    /// once the wait is over.
    @Test func aRefusedCentralBacksOffAndGetsItsPipeOnceTheWaitIsOver() async throws {
        let (server, phone) = (IdentityKey(), IdentityKey())
        let (listening, path, refusals) = try await Self.keyedServer("backoff-wait", server: server, phone: phone, wait: .seconds(3))
        // From the server's own count, not from when this test saw it: a starved test sees it late.
        let failedAt = try await Self.startBackoff(at: listening, path: path, server: server, refusals: refusals)
        let pipe = try await MessagePipe.connect(
            to: "unix:\(path)", options: phoneOptions(phone, server: server, attempts: .max))
        let waited = ContinuousClock.now - failedAt
        let refused = listening.refusedHandshakes - 1
        #expect(waited > .milliseconds(2500), "connected after \(waited), inside the server's wait")
        #expect((1 ... 7).contains(refused), "\(refused) connections refused in \(waited)")
        try await pipe.send(Array("paid".utf8), timeout: hangGuard)
        var centrals = listening.centrals.makeAsyncIterator()
        let central = try #require(await centrals.next())
        var messages = central.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == Array("paid".utf8))
        await pipe.close()
        await listening.close()
    }

    /// Refused `attempts` times in a row, the central gives up with a typed error instead of trying on.
    @Test func aCentralRefusedEveryTimeGivesUpAfterItsAttempts() async throws {
        let (server, phone) = (IdentityKey(), IdentityKey())
        let (listening, path, refusals) = try await Self.keyedServer("backoff-giveup", server: server, phone: phone, wait: .seconds(60))
        _ = try await Self.startBackoff(at: listening, path: path, server: server, refusals: refusals)
        await #expect {
            _ = try await MessagePipe.connect(to: "unix:\(path)", options: phoneOptions(phone, server: server, attempts: 3))
        } throws: { error in
            error as? MessagePipeError == .linkLost(attempts: 3)
        }
        #expect(listening.refusedHandshakes - 1 == 3, "the first connection and two reconnects")
        await listening.close()
    }
}
