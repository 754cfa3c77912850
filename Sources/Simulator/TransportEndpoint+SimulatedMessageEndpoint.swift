public import Transport
/// The real protocol endpoint in the simulator: offered messages are submitted while the send queue has room.
extension TransportEndpoint: SimulatedMessageEndpoint {
    /// Submits `message` if the send queue has room.
    public mutating func offer(_ message: [UInt8], now: Duration) -> Bool {
        guard canSubmit else { return false }
        do {
            _ = try submit(message, now: now)
            return true
        } catch {
            return false
        }
    }

    /// The body of the next delivered message.
    public mutating func takeDeliveredMessage() -> [UInt8]? { takeMessage()?.body }

    /// Drains the endpoint's events and counts the failed sends among them.
    public mutating func takeSendFailures() -> Int {
        var failures = 0
        while let event = pollEvent() {
            if case .sendFailed = event { failures += 1 }
        }
        return failures
    }
}
