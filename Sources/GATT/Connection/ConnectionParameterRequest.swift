/// What a user asked for on the command line or in the library's options: any of the interval range,
/// latency, supervision timeout and PHY preference; what is not given stays the system's. Each given value
/// is already within its own range (the parsers check it); ``resolved(over:)`` applies the rule that ties
/// them together.
///
/// ```swift
/// let request = try ConnectionParameterRequest(interval: "7.5-15", latency: "0", supervisionTimeout: nil, phy: "2m")
/// let parameters = try request.resolved(over: .linuxDefault)   // 7.5-15 ms, latency 0, 420 ms
/// ```
public struct ConnectionParameterRequest: Sendable, Hashable, CustomStringConvertible {
    /// Interval bounds in 1.25 ms units, or nil.
    public var interval: (minimum: UInt16, maximum: UInt16)? {
        get { intervalUnits.map { ($0[0], $0[1]) } }
        set { intervalUnits = newValue.map { [$0.minimum, $0.maximum] } }
    }
    /// Peripheral latency, or nil.
    public var latency: UInt16?
    /// Supervision timeout in 10 ms units, or nil.
    public var supervisionTimeout: UInt16?
    /// The PHY to prefer for transmitting and receiving, or nil.
    public var phy: LEPHY?

    private var intervalUnits: [UInt16]?

    /// Nothing requested.
    public init() {}

    /// Parses the CLI's texts (nil: not given): `--conn-interval MIN[-MAX]`, `--conn-latency N`,
    /// `--supervision-timeout MS`, `--phy 1m|2m|coded`. Throws the error naming the first rule broken,
    /// including a timeout too short for the interval and latency given beside it.
    public init(interval: String?, latency: String?, supervisionTimeout: String?, phy: String?) throws(ConnectionParametersError) {
        if let interval { self.interval = try ConnectionParameters.parseInterval(interval) }
        if let latency { self.latency = try ConnectionParameters.parseLatency(latency) }
        if let supervisionTimeout { self.supervisionTimeout = try ConnectionParameters.parseSupervisionTimeout(supervisionTimeout) }
        if let phy { self.phy = try LEPHY(parsing: phy) }
        if let timeout = self.supervisionTimeout, let maximum = self.interval?.maximum {
            _ = try ConnectionParameters(
                minimumInterval: maximum, maximumInterval: maximum, latency: self.latency ?? 0, supervisionTimeout: timeout)
        }
    }

    /// True when no value was given.
    public var isEmpty: Bool { intervalUnits == nil && latency == nil && supervisionTimeout == nil && phy == nil }

    /// True when the interval, latency or timeout was given (what Load Connection Parameters carries).
    public var hasConnectionParameters: Bool { intervalUnits != nil || latency != nil || supervisionTimeout != nil }

    /// The given values over `defaults`. A timeout that was not given becomes the default when that is long
    /// enough for the interval and latency in force, otherwise the shortest one that is; a given timeout that
    /// is too short throws ``ConnectionParametersError/supervisionTimeoutTooShort(timeout:latency:maximumInterval:needed:)``.
    public func resolved(over defaults: ConnectionParameters) throws(ConnectionParametersError) -> ConnectionParameters {
        let interval = self.interval ?? (defaults.minimumInterval, defaults.maximumInterval)
        let latency = self.latency ?? defaults.latency
        let timeout = supervisionTimeout ?? max(
            defaults.supervisionTimeout,
            ConnectionParameters.shortestSupervisionTimeout(latency: latency, maximumInterval: interval.maximum))
        return try ConnectionParameters(
            minimumInterval: interval.minimum, maximumInterval: interval.maximum, latency: latency,
            supervisionTimeout: timeout)
    }

    /// "interval 7.5-15 ms, latency 0, phy 2m" (only what was given; "system defaults" when nothing was).
    public var description: String {
        var parts: [String] = []
        if let interval { parts.append("interval \(ConnectionParameters.intervalText(minimum: interval.minimum, maximum: interval.maximum)) ms") }
        if let latency { parts.append("latency \(latency)") }
        if let supervisionTimeout { parts.append("supervision timeout \(Int(supervisionTimeout) * 10) ms") }
        if let phy { parts.append("phy \(phy)") }
        return parts.isEmpty ? "system defaults" : parts.joined(separator: ", ")
    }
}
