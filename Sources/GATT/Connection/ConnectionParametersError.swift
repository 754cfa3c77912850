/// Why a connection parameter, as given on the command line or in ``ConnectionParameters``'s initializers,
/// is not one Bluetooth allows. Each `description` names the rule that was broken; the CLI prints it as is.
public enum ConnectionParametersError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The interval text is not `MS` or `MIN-MAX` with decimal milliseconds.
    case intervalNotMilliseconds(String)
    /// An interval is not a whole number of 1.25 ms steps.
    case intervalNotInSteps(String)
    /// An interval lies outside 7.5 ms to 4000 ms.
    case intervalOutOfRange(String)
    /// The range's minimum is above its maximum.
    case intervalMinimumAboveMaximum(minimum: String, maximum: String)
    /// The latency is not a whole number from 0 to 499.
    case latencyOutOfRange(String)
    /// The supervision timeout is not a whole number of milliseconds.
    case supervisionTimeoutNotMilliseconds(String)
    /// The supervision timeout is not a multiple of 10 ms.
    case supervisionTimeoutNotInSteps(String)
    /// The supervision timeout lies outside 100 ms to 32000 ms.
    case supervisionTimeoutOutOfRange(String)
    /// The supervision timeout is not longer than (1 + latency) x maximum interval x 2; `needed` is the
    /// shortest allowed value in milliseconds (nil when even 32000 ms is too short).
    case supervisionTimeoutTooShort(timeout: String, latency: Int, maximumInterval: String, needed: Int?)
    /// The PHY is not 1m, 2m or coded.
    case unknownPHY(String)

    public var description: String {
        switch self {
        case let .intervalNotMilliseconds(text):
            "connection interval '\(text)' is not MS or MIN-MAX in milliseconds (e.g. 7.5 or 15-30)"
        case let .intervalNotInSteps(text):
            "connection interval \(text) ms is not a multiple of 1.25 ms (e.g. 7.5, 8.75, 10, 11.25)"
        case let .intervalOutOfRange(text):
            "connection interval \(text) ms is outside 7.5 to 4000 ms"
        case let .intervalMinimumAboveMaximum(minimum, maximum):
            "connection interval minimum \(minimum) ms is above the maximum \(maximum) ms"
        case let .latencyOutOfRange(text):
            "connection latency '\(text)' is not a whole number from 0 to 499"
        case let .supervisionTimeoutNotMilliseconds(text):
            "supervision timeout '\(text)' is not a whole number of milliseconds"
        case let .supervisionTimeoutNotInSteps(text):
            "supervision timeout \(text) ms is not a multiple of 10 ms"
        case let .supervisionTimeoutOutOfRange(text):
            "supervision timeout \(text) ms is outside 100 to 32000 ms"
        case let .supervisionTimeoutTooShort(timeout, latency, maximumInterval, needed):
            "supervision timeout \(timeout) ms must be longer than (1 + latency \(latency)) x maximum interval "
                + "\(maximumInterval) ms x 2"
                + (needed.map { "; use at least \($0) ms" } ?? "; no timeout up to 32000 ms is, lower the latency or the interval")
        case let .unknownPHY(text):
            "PHY '\(text)' is not 1m, 2m or coded"
        }
    }
}
