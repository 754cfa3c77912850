import BLELink
@testable import MsgPipe
@testable import MsgPipeCore
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
}
