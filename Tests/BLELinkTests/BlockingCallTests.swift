import Glibc
import Synchronization
import Testing
@testable import BLELink
@testable import BLESocket

/// A blocking call runs on a thread of its own, and a thread that cannot start is an error, never a call on the
/// caller's thread.
struct BlockingCallTests {
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    @Test func aThreadThatCannotStartThrowsTheCallersErrorAndTheBodyNeverRuns() async {
        let ran = Flag()
        let expected = BluetoothError.system(call: "pthread_create", errno: EAGAIN, message: String(cString: strerror(EAGAIN)))
        await #expect(throws: expected) {
            try await BlockingCall.run(
                threadStartFailure: BlockingCall.threadNotStarted, startThread: { _ in EAGAIN }
            ) { () throws(BluetoothError) in ran.set() }
        }
        #expect(!ran.isSet)
    }

    @Test func theBodyRunsOnAThreadOfItsOwnAndItsErrorComesBack() async throws {
        let caller = pthread_self()
        #expect(try await BlockingCall.run { () throws(BluetoothError) in pthread_equal(pthread_self(), caller) == 0 })
        await #expect(throws: BluetoothError.invalidArgument("no")) {
            try await BlockingCall.run { () throws(BluetoothError) in throw .invalidArgument("no") }
        }
    }
}
