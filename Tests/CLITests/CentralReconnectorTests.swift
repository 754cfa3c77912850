import GATT
@testable import msgpipe
import Synchronization
import Testing

/// How a central's dropped link is brought back (`LinkOptions.reconnect`).
@Suite("reconnecting a central")
struct CentralReconnectorTests {
    /// The first attempt waits ``LinkOptions/settleAfterDrop``: a Linux peripheral re-arms its advertising in the
    /// moment after the drop, and a connect landing there wedged the lab's controller (docs/LAB.md).
    @Test func theFirstAttemptComesAfterThePeripheralHadTimeToAdvertiseAgain() async throws {
        let options = try LinkOptions.parse(["--link", "unix:/nonexistent/msgpipe-reconnect-test"])
        let notes = Mutex<[(String, ContinuousClock.Instant)]>([])
        let started = ContinuousClock.now
        let back = await options.reconnect(.gatt(GATTLink(profile: .msgpipe)), attempts: 1) { note in
            notes.withLock { $0.append((note, ContinuousClock.now)) }
        }
        #expect(!back)
        let failures = notes.withLock { $0 }
        try #require(failures.count == 1, "\(failures.map(\.0))")
        #expect(failures[0].0.hasPrefix("reconnect attempt 1 of 1 failed"), "\(failures[0].0)")
        #expect(failures[0].1 - started >= .milliseconds(250), "the first attempt came too soon")
    }
}
