import Foundation
import Testing
@testable import Exchange
@testable import ExchangePosix

@Suite("command runner")
struct CommandRunnerTests {
    @Test("the request goes to standard input, standard output is the response")
    func echo() async throws {
        let input = (0..<200_000).map { UInt8(truncatingIfNeeded: $0) }
        let outcome = try await CommandRunner(command: "cat", maximumOutputSize: 1 << 20).run(input: input)
        #expect(outcome == .exited(code: 0, output: input))
    }

    @Test("a non-zero exit is reported with its code and output")
    func failure() async throws {
        let outcome = try await CommandRunner(command: "echo declined; exit 3").run(input: [])
        #expect(outcome == .exited(code: 3, output: Array("declined\n".utf8)))
    }

    @Test("a command that ignores its input still completes")
    func ignoresInput() async throws {
        let outcome = try await CommandRunner(command: "echo done").run(input: .init(repeating: 1, count: 1 << 20))
        #expect(outcome == .exited(code: 0, output: Array("done\n".utf8)))
    }

    @Test("a command past its timeout is killed with its process group")
    func timeout() async throws {
        // 3 s, not less: the shell must start and echo before the kill, which a loaded host can hold back for
        // longer than 300 ms; the 30 s sleep is what the timeout cuts.
        let outcome = try await CommandRunner(command: "echo started; sleep 30", timeout: .seconds(3)).run(input: [])
        #expect(outcome == .timedOut(output: Array("started\n".utf8)))
    }

    @Test("output beyond the limit kills the command instead of growing memory")
    func outputLimit() async throws {
        let outcome = try await CommandRunner(command: "yes", maximumOutputSize: 10_000).run(input: [])
        #expect(outcome == .outputTooLarge(limit: 10_000))
    }

    @Test("cancelling the task kills the running command")
    func cancellation() async throws {
        let task = Task { try await CommandRunner(command: "sleep 30; echo late").run(input: []) }
        task.cancel()
        #expect(try await task.value == .cancelled)
    }
}
