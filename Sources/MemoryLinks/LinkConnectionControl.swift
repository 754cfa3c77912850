import Transport
/// A link whose connection a test or a fault injector can drop and bring back (in-memory and simulated links).
public protocol LinkConnectionControl: Sendable {
    /// Drops the connection: both ends see `.disconnected(reason:)`; waiting sends throw.
    func disconnect(reason: String) async
    /// Brings a dropped connection back: both ends see `.connected(maximumPacketSize:)`.
    func reconnect() async
}
