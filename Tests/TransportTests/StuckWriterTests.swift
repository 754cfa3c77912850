import MemoryLinks
import Synchronization
import Testing
import TestSupport
import Transport

/// A peer that reads nothing must end a send without a deadline with an error: whether the link takes the
/// writes (the message's own retransmission timers count), never takes the first one, or stops taking them
/// mid-message (a GATT notification queue or an L2CAP channel that stays full).
@Suite(.timeLimit(.minutes(3)))
struct StuckWriterTests {
    /// Connects, then either takes every packet and delivers nothing back, or never returns from a send.
    final class SilentLink: Link, Sendable {
        let events: AsyncStream<LinkEvent>
        private let continuation: AsyncStream<LinkEvent>.Continuation
        let takesWrites: Bool

        init(takesWrites: Bool) {
            self.takesWrites = takesWrites
            (events, continuation) = AsyncStream.makeStream()
            continuation.yield(.connected(maximumPacketSize: 100))
        }

        func send(_ packet: [UInt8]) async throws {
            if takesWrites { return }
            try await Task.sleep(for: .seconds(3600))
            throw LinkError.closed
        }

        func close() async { continuation.finish() }
    }

    /// A memory link whose sends stop returning after `taking` packets (the peer's answers still arrive);
    /// `stalls` yields each send that stopped.
    final class StallingLink: Link, Sendable {
        let base: MemoryLink
        let stalls: AsyncStream<Void>
        private let stalled: AsyncStream<Void>.Continuation
        private let left: Mutex<Int>

        init(_ base: MemoryLink, taking: Int) {
            self.base = base
            left = Mutex(taking)
            (stalls, stalled) = AsyncStream.makeStream()
        }

        var events: MemoryLink.Events { base.events }

        func send(_ packet: [UInt8]) async throws {
            let takes = left.withLock { left -> Bool in
                left -= 1
                return left >= 0
            }
            if takes { return try await base.send(packet) }
            stalled.yield()
            try await Task.sleep(for: .seconds(3600))
            throw LinkError.closed
        }

        func close() async { await base.close() }
    }

    /// A first timeout of 200 ms: a writer the pool has not run yet is "stuck" too, and four timeouts in a row
    /// (about 3 s with backoff, not 0.75 s) must not pass before a loaded machine runs it.
    static var options: TransportOptions {
        var options = TransportOptions.fastForTests
        options.endpoint.maximumRetries = 3
        options.endpoint.initialRetransmissionTimeout = .milliseconds(200)
        return options
    }

    @Test func aSilentPeerOnALinkThatTakesTheWritesFailsTheSend() async {
        let sender = Transport(link: SilentLink(takesWrites: true), options: Self.options)
        #expect(await sendOutcome(of: sender, [1, 2, 3], patience: hangGuard) == "retriesExhausted")
        await sender.close()
    }

    @Test func aLinkThatNeverTakesTheFirstWriteFailsTheSendAsStalled() async {
        let sender = Transport(link: SilentLink(takesWrites: false), options: Self.options)
        #expect(await sendOutcome(of: sender, [1, 2, 3], patience: hangGuard) == "linkStalled")
        await sender.close()
    }

    /// The link stops taking packets after the hello and a few of the first message's: the first fails with
    /// retriesExhausted, the one queued behind it, never started, as stalled.
    @Test func aLinkThatStopsTakingWritesMidMessageFailsTheQueuedSendToo() async {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 100, capacity: 256)
        let link = StallingLink(left, taking: 5)
        let sender = Transport(link: link, options: Self.options)
        let receiver = Transport(link: right, options: Self.options)
        async let first = sendOutcome(of: sender, payload(size: 5_000, seed: 1), patience: hangGuard)
        // The second is sent once the link stopped taking packets, not after a fixed pause in which a loaded host
        // may not even have started the first send (the second then went first, and was acknowledged).
        _ = await nextEvent(of: link.stalls)
        async let second = sendOutcome(of: sender, payload(size: 100, seed: 2), patience: hangGuard)
        let outcomes = await [first, second]
        #expect(outcomes == ["retriesExhausted", "linkStalled"])
        await sender.close()
        await receiver.close()
    }
}
