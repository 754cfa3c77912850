import Glibc

/// The log-distance path-loss estimate the seeds use (seed 004): d = 10^((|RSSI| - A) / (10 n)) metres.
public struct DistanceEstimate: Sendable, Equatable {
    /// A: the RSSI magnitude in dBm at 1 m from the transmitter.
    public var referencePower: Double
    /// n: the environment's attenuation factor (2 in free space, 2.5-4 indoors).
    public var attenuation: Double

    /// Defaults: A = 59 dBm, n = 2.0 (the values commonly paired with this formula; seed 004 gives none).
    public init(referencePower: Double = 59, attenuation: Double = 2.0) {
        self.referencePower = referencePower
        self.attenuation = attenuation
    }

    /// The estimated distance in metres, or nil when RSSI is unavailable (127) or n is not positive.
    public func metres(rssi: Int8) -> Double? {
        guard rssi != 127, attenuation > 0 else { return nil }
        return pow(10, (Double(abs(Int(rssi))) - referencePower) / (10 * attenuation))
    }
}
