import MemoryLinks
import Synchronization
import Testing
import TestSupport
import Transport

/// Transport's timers keep firing however their sleeps and the events that re-arm them interleave: the way out
/// of a silent link (retransmission, renewal, failure) runs on them.
@Suite(.timeLimit(.minutes(1)))
struct TransportTimerTests {
    /// A clock whose sleeps end at once, its time moved to their deadline: every timer is due the moment it is
    /// armed, so a sleep ends before anything else the transport does in between.
    struct SkippingClock: Clock {
        struct Instant: InstantProtocol {
            var offset: Duration
            func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
            func duration(to other: Instant) -> Duration { other.offset - offset }
            static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        }

        final class Time: Sendable {
            let offset = Mutex(Duration.zero)
        }

        let time = Time()
        var now: Instant { Instant(offset: time.offset.withLock { $0 }) }
        var minimumResolution: Duration { .zero }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            try Task.checkCancellation()
            time.offset.withLock { $0 = max($0, deadline.offset) }
        }
    }

    /// A peer that welcomes the sender and then goes deaf (nothing reaches the sender any more): only the
    /// timers can end the send. Each of many senders must fail it: with retriesExhausted, or with linkStalled
    /// when this clock ran through the hello's timeouts before the writer task got to write it (here time moves
    /// only by timers, so a writer the pool has not run yet looks stuck). One whose timer loop stopped would
    /// wait for ever (caught here by a watchdog); none may be acknowledged.
    @Test func aSenderWhosePeerGoesDeafFailsByItsTimersEveryTime() async throws {
        var options = TransportOptions.fastForTests
        options.endpoint.maximumRetries = 10
        var outcomes: [String: Int] = [:]
        for round in 0 ..< 200 {
            let (left, right) = MemoryLink.pair(maximumPacketSize: 100, capacity: 256)
            let deaf = TransportRenewalTests.GoesDeafLink(left, hearing: 1, renewalRepairs: false)
            let sender = Transport(link: deaf, options: options, clock: SkippingClock())
            let receiver = Transport(link: right, options: options)
            let outcome = await sendOutcome(of: sender, payload(size: 2_000, seed: UInt64(round)), patience: .seconds(20))
            await sender.close()
            outcomes[outcome, default: 0] += 1
            await receiver.close()
            if outcome != "retriesExhausted", outcome != "linkStalled" { break }
        }
        #expect(outcomes["retriesExhausted", default: 0] + outcomes["linkStalled", default: 0] == 200, "\(outcomes)")
    }
}
