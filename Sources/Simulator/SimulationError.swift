import Transport
/// Why the BLE air-time simulator could not run or continue.
public enum SimulationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A configuration value is outside what BLE allows or what the simulator models.
    case invalidConfiguration(String)
    /// An endpoint wrote a packet larger than the link's maximum packet size (ATT_MTU - 3).
    case packetTooLarge(size: Int, limit: Int)
    /// An endpoint's timer did not move past `now` after it was fired: the simulation would spin.
    case timerDidNotAdvance(at: Duration)

    public var description: String {
        switch self {
        case let .invalidConfiguration(reason): "invalid simulator configuration: \(reason)"
        case let .packetTooLarge(size, limit):
            "an endpoint wrote a packet of \(size) bytes, over the link's limit of \(limit)"
        case let .timerDidNotAdvance(now): "an endpoint's timer stayed due after firing at \(now)"
        }
    }
}
