public import Transport
/// A ``PacketEndpoint`` that carries whole messages, as ``SimulatedTransfer`` needs: it takes messages to send
/// and hands out what its peer delivered.
public protocol SimulatedMessageEndpoint: PacketEndpoint {
    /// Offers one message to send at `now`; false when the endpoint cannot take more now (try again later).
    mutating func offer(_ message: [UInt8], now: Duration) -> Bool
    /// The next message the peer delivered, or nil.
    mutating func takeDeliveredMessage() -> [UInt8]?
    /// How many offered messages the endpoint gave up on since the last call.
    mutating func takeSendFailures() -> Int
}
