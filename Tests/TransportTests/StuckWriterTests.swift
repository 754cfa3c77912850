import Testing
import TestSupport
import Transport

/// A peer that never answers must end a send without a deadline with an error, whether the link takes the
/// writes (the message's own retransmission timers count) or never takes the first one (a GATT notification
/// queue or an L2CAP channel that stays full).
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

    /// The send's outcome, or "still waiting" after `patience` (50 ms timers: the three retries take well
    /// under 1 s alone).
    static func outcome(takesWrites: Bool, patience: Duration) async -> String {
        var options = TransportOptions.fastForTests
        options.endpoint.maximumRetries = 3
        let sender = Transport(link: SilentLink(takesWrites: takesWrites), options: options)
        let outcome = await sendOutcome(of: sender, [1, 2, 3], patience: patience)
        await sender.close()
        return outcome
    }

    @Test func aSilentPeerOnALinkThatTakesTheWritesFailsTheSend() async {
        #expect(await Self.outcome(takesWrites: true, patience: hangGuard) == "retriesExhausted")
    }

    /// Known: the hello's timer is armed only once the hello is written, and the message's only once its
    /// packets are, so a writer stuck on the first packet leaves no timer and the send waits for ever.
    @Test func aLinkThatNeverTakesTheFirstWriteFailsTheSend() async {
        let outcome = await Self.outcome(takesWrites: false, patience: .seconds(5))
        withKnownIssue("no timer runs while the writer is stuck on the hello") {
            #expect(outcome == "retriesExhausted")
        }
    }
}
