import ArgumentParser
import Testing
@testable import MsgPipeCLI

/// `send --timeout` bounds the whole run, also a send that does not return when cancelled (a Bluetooth connect).
@Suite("send's deadline over the whole run")
struct SendDeadlineTests {
    @Test("a send still running at the deadline ends in ExitCode 2 at once; it is not awaited")
    func deadlineWins() async throws {
        let started = ContinuousClock.now
        await #expect(throws: ExitCode(SendExitCode.notAcknowledged.rawValue)) {
            _ = try await SendCommand.bounded(by: .now + .milliseconds(100)) {
                // Deaf to cancellation for 5 s, as a blocked connect is.
                let end = ContinuousClock.now + .seconds(5)
                while ContinuousClock.now < end { try? await Task.sleep(for: .milliseconds(20)) }
                return .success
            }
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test("a send that ends before the deadline gives its outcome; without a deadline it is awaited")
    func outcomeWins() async throws {
        let early = try await SendCommand.bounded(by: .now + .seconds(30)) { .linkFailure }
        #expect(early == .linkFailure)
        let unbounded = try await SendCommand.bounded(by: nil) {
            try? await Task.sleep(for: .milliseconds(50))
            return .success
        }
        #expect(unbounded == .success)
    }
}
