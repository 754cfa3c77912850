/// A message queued to be sent (``Transport/submit(_:compress:timeout:)``): ``acknowledged()`` returns once the
/// peer acknowledged all of it, or throws why it was not. Await it once.
public struct SendReceipt: Sendable {
    private let wait: @Sendable () async throws -> Void

    /// A receipt whose outcome `wait` gives (for layers that wrap a Transport's).
    public init(_ wait: @escaping @Sendable () async throws -> Void) {
        self.wait = wait
    }

    /// Returns once the peer acknowledged the message; throws what ``Transport/send(_:compress:timeout:)`` would.
    /// Cancelling the waiting task cancels the message (it is withdrawn at the peer).
    public func acknowledged() async throws {
        try await wait()
    }
}
