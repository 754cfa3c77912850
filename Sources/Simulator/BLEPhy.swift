import Transport
/// The LE physical layer a simulated connection uses.
public enum BLEPhy: String, Sendable, CaseIterable {
    /// LE 1M: 1 Mbit/s, 1-byte preamble.
    case le1M = "1m"
    /// LE 2M: 2 Mbit/s, 2-byte preamble.
    case le2M = "2m"

    /// Air time of one bit, in nanoseconds.
    public var nanosecondsPerBit: Int64 { self == .le1M ? 1_000 : 500 }

    /// Preamble length in bytes.
    public var preambleBytes: Int { self == .le1M ? 1 : 2 }
}
