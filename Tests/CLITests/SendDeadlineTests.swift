import ArgumentParser
import Testing
@testable import MsgPipeCLI

/// `send --timeout` bounds the whole run, also a send that does not return when cancelled (a Bluetooth connect).
@Suite("send's deadline over the whole run")
struct SendDeadlineTests {
    @Test("a send still running at the deadline ends in ExitCode 2; it is not awaited")
    func deadlineWins() async throws {
        await #expect(throws: ExitCode(SendExitCode.notAcknowledged.rawValue)) {
            _ = try await SendCommand.bounded(by: .now + .milliseconds(100)) {
                // Never returns, cancelled or not, as a blocked connect: the test ends only if it is not awaited.
                await withUnsafeContinuation { (_: UnsafeContinuation<SendExitCode, Never>) in }
            }
        }
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
