import MsgPipeCore
import Testing

/// A whole run bounded by a deadline, also work that does not return when cancelled (a Bluetooth connect).
@Suite("work abandoned at a deadline")
struct AbandoningDeadlineTests {
    @Test("work still running at the deadline gives nil and is not awaited")
    func deadlineWins() async {
        let outcome = await MessagePipe.abandoning(after: .now + .milliseconds(100)) {
            // Never returns, cancelled or not, as a blocked connect: the test ends only if it is not awaited.
            await withUnsafeContinuation { (_: UnsafeContinuation<Int, Never>) in }
        }
        #expect(outcome == nil)
    }

    @Test("work that ends before the deadline gives its value; without a deadline it is awaited")
    func outcomeWins() async {
        #expect(await MessagePipe.abandoning(after: .now + .seconds(30)) { 7 } == 7)
        let unbounded = await MessagePipe.abandoning(after: nil) { () async -> Int in
            try? await Task.sleep(for: .milliseconds(50))
            return 8
        }
        #expect(unbounded == 8)
    }
}
