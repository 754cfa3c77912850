import BLELink
import GATT
@testable import MsgPipe
@testable import MsgPipeCore
import Synchronization
import Testing

/// How a central's dropped link is brought back (``PipeConnector/reconnect(_:attempts:onReconnected:)``).
@Suite("reconnecting a central")
struct ReconnectTests {
    /// The first attempt waits ``PipeConnector/settleAfterDrop``: a Linux peripheral re-arms its advertising
    /// in the moment after the drop, and a connect landing there can fail (docs/LAB.md).
    @Test func theFirstAttemptComesAfterThePeripheralHadTimeToAdvertiseAgain() async throws {
        let notes = Mutex<[(String, ContinuousClock.Instant)]>([])
        var options = MessagePipe.Options()
        options.onNote = { note in notes.withLock { $0.append((note.description, ContinuousClock.now)) } }
        let connector = PipeConnector(to: .unix(path: "/nonexistent/msgpipe-reconnect-test"), options: options)
        let started = ContinuousClock.now
        let back = await connector.reconnect(try await connector.makeLink(), attempts: 1)
        #expect(!back)
        let failures = notes.withLock { $0 }
        try #require(failures.count == 1, "\(failures.map(\.0))")
        #expect(failures[0].0.hasPrefix("reconnect attempt 1 of 1 failed"), "\(failures[0].0)")
        #expect(failures[0].1 - started >= .milliseconds(250), "the first attempt came too soon")
    }

    /// Backoff between attempts follows the policy: 500 ms, 1 s, 2 s ... capped (one policy for every backend).
    @Test func attemptsAreSpacedByThePolicy() async throws {
        let times = Mutex<[ContinuousClock.Instant]>([])
        var options = MessagePipe.Options()
        options.reconnect = ReconnectPolicy(initial: .milliseconds(100), maximum: .milliseconds(200), attempts: 3)
        options.onNote = { _ in times.withLock { $0.append(.now) } }
        let connector = PipeConnector(to: .unix(path: "/nonexistent/msgpipe-reconnect-test"), options: options)
        let started = ContinuousClock.now
        #expect(await connector.reconnect(try await connector.makeLink(), attempts: 3) == false)
        let seen = times.withLock { $0 }
        try #require(seen.count == 3)
        // settle 250 ms, then 0, 100 ms, 200 ms between failures.
        #expect(seen[0] - started >= .milliseconds(250))
        #expect(seen[1] - seen[0] >= .milliseconds(100))
        #expect(seen[2] - seen[1] >= .milliseconds(200))
    }
}

/// Which first-connect failures a central tries again within its connect timeout.
@Suite("the first connect's retries")
struct FirstConnectRetryTests {
    @Test func transientBluetoothAndGATTSetupFailuresAreTriedAgain() {
        #expect(PipeConnector.isTransient(BluetoothError.connectTimedOut(peer: "00:AA:01:00:00:00", timeout: .seconds(5))))
        #expect(PipeConnector.isTransient(BluetoothError.peerNotFound(query: "name 'kiosk'", timeout: .seconds(5))))
        #expect(PipeConnector.isTransient(ATTError.transactionTimeout(request: 0x02)))
        #expect(PipeConnector.isTransient(ATTError.disconnected(reason: "peer left")))
    }

    @Test func whatOnlyTheUserCanFixIsNot() {
        #expect(!PipeConnector.isTransient(BluetoothError.permissionDenied(operation: "bind")))
        #expect(!PipeConnector.isTransient(BluetoothError.kernelWithoutBluetooth))
        #expect(!PipeConnector.isTransient(ATTError.io(operation: "connect to /x", errno: 2, message: "No such file or directory")))
        #expect(!PipeConnector.isTransient(MessagePipeError.formatMismatch(.legacy)))
    }

    /// A socket path that is not there fails at once: nothing to wait for on a UNIX socket.
    @Test func aMissingSocketFailsWithoutRetrying() async {
        var options = MessagePipe.Options()
        // A connector that retried would take the whole 60 s; under 30 s is "at once" with room for a loaded
        // host, where a 300 ms timer fired 5 s late.
        options.connectTimeout = .seconds(60)
        let started = ContinuousClock.now
        await #expect(throws: ATTError.self) {
            let connector = PipeConnector(to: .unix(path: "/nonexistent/mp.sock"), options: options)
            _ = try await connector.connect(try await connector.makeLink())
        }
        #expect(ContinuousClock.now - started < .seconds(30))
    }
}
