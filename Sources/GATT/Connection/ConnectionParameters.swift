/// LE connection parameters in HCI units (interval 1.25 ms, timeout 10 ms); a value always meets the Core
/// specification's rules (Vol 4 Part E 7.8.12), else initialization throws a ``ConnectionParametersError``.
///
/// ```swift
/// let parameters = try ConnectionParameters(interval: .microseconds(7_500) ... .milliseconds(15),
///                                           latency: 0, supervisionTimeout: .seconds(2))
/// ```
public struct ConnectionParameters: Sendable, Hashable, CustomStringConvertible {
    /// The connection interval's unit.
    public static let intervalUnit = Duration.microseconds(1_250)
    /// The supervision timeout's unit.
    public static let supervisionTimeoutUnit = Duration.milliseconds(10)
    /// Allowed intervals, in 1.25 ms units (7.5 ms to 4 s).
    public static let intervalUnits: ClosedRange<UInt16> = 6 ... 3_200
    /// Allowed intervals as durations.
    public static let intervalLimits: ClosedRange<Duration> =
        intervalUnit * Int(intervalUnits.lowerBound) ... intervalUnit * Int(intervalUnits.upperBound)
    /// Allowed peripheral latencies, in connection events.
    public static let latencies: ClosedRange<UInt16> = 0 ... 499
    /// Allowed supervision timeouts, in 10 ms units (100 ms to 32 s).
    public static let supervisionTimeoutUnits: ClosedRange<UInt16> = 10 ... 3_200

    /// What Linux uses when nothing else was configured (hci_core.c, hci_alloc_dev_priv): 30-50 ms,
    /// latency 0, timeout 420 ms.
    public static let linuxDefault = ConnectionParameters(
        checked: (minimum: 24, maximum: 40), latency: 0, supervisionTimeout: 42)

    /// Shortest interval, in 1.25 ms units.
    public let minimumInterval: UInt16
    /// Longest interval, in 1.25 ms units.
    public let maximumInterval: UInt16
    /// Connection events the peripheral may skip.
    public let latency: UInt16
    /// Supervision timeout, in 10 ms units.
    public let supervisionTimeout: UInt16

    /// Parameters in their HCI units; throws the ``ConnectionParametersError`` that names the first rule
    /// broken.
    public init(
        minimumInterval: UInt16, maximumInterval: UInt16, latency: UInt16, supervisionTimeout: UInt16
    ) throws(ConnectionParametersError) {
        for units in [minimumInterval, maximumInterval] where !Self.intervalUnits.contains(units) {
            throw .intervalOutOfRange(Self.millisecondsText(intervalUnits: units))
        }
        guard minimumInterval <= maximumInterval else {
            throw .intervalMinimumAboveMaximum(
                minimum: Self.millisecondsText(intervalUnits: minimumInterval),
                maximum: Self.millisecondsText(intervalUnits: maximumInterval))
        }
        guard Self.latencies.contains(latency) else { throw .latencyOutOfRange("\(latency)") }
        guard Self.supervisionTimeoutUnits.contains(supervisionTimeout) else {
            throw .supervisionTimeoutOutOfRange("\(Int(supervisionTimeout) * 10)")
        }
        let shortest = Self.shortestSupervisionTimeout(latency: latency, maximumInterval: maximumInterval)
        guard supervisionTimeout >= shortest else {
            throw .supervisionTimeoutTooShort(
                timeout: "\(Int(supervisionTimeout) * 10)", latency: Int(latency),
                maximumInterval: Self.millisecondsText(intervalUnits: maximumInterval),
                needed: shortest <= Self.supervisionTimeoutUnits.upperBound ? Int(shortest) * 10 : nil)
        }
        self.init(checked: (minimumInterval, maximumInterval), latency: latency, supervisionTimeout: supervisionTimeout)
    }

    /// Parameters from durations: each interval bound must be a whole number of 1.25 ms steps, the timeout
    /// of 10 ms steps; then the rules of ``init(minimumInterval:maximumInterval:latency:supervisionTimeout:)``.
    public init(
        interval: ClosedRange<Duration>, latency: Int = 0, supervisionTimeout: Duration
    ) throws(ConnectionParametersError) {
        let minimum = try Self.intervalUnits(of: interval.lowerBound)
        let maximum = try Self.intervalUnits(of: interval.upperBound)
        guard let latency = UInt16(exactly: latency), Self.latencies.contains(latency) else {
            throw .latencyOutOfRange("\(latency)")
        }
        let timeout = try Self.supervisionTimeoutUnits(of: supervisionTimeout)
        try self.init(minimumInterval: minimum, maximumInterval: maximum, latency: latency, supervisionTimeout: timeout)
    }

    private init(checked interval: (minimum: UInt16, maximum: UInt16), latency: UInt16, supervisionTimeout: UInt16) {
        minimumInterval = interval.minimum
        maximumInterval = interval.maximum
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// The interval range as durations.
    public var interval: ClosedRange<Duration> {
        Self.intervalUnit * Int(minimumInterval) ... Self.intervalUnit * Int(maximumInterval)
    }

    /// The supervision timeout as a duration.
    public var supervisionTimeoutDuration: Duration { Self.supervisionTimeoutUnit * Int(supervisionTimeout) }

    /// The shortest supervision timeout, in 10 ms units, longer than (1 + latency) x maximum interval x 2
    /// (and at least 100 ms); above 3200 when no allowed timeout is.
    public static func shortestSupervisionTimeout(latency: UInt16, maximumInterval: UInt16) -> UInt16 {
        // timeout x 10 ms > (1 + latency) x interval x 1.25 ms x 2  <=>  4 x timeout > (1 + latency) x interval
        let bound = (1 + Int(latency)) * Int(maximumInterval) / 4 + 1
        return UInt16(clamping: max(bound, Int(supervisionTimeoutUnits.lowerBound)))
    }

    /// "interval 7.5-15 ms, latency 0, supervision timeout 2000 ms".
    public var description: String {
        "interval \(Self.intervalText(minimum: minimumInterval, maximum: maximumInterval)) ms, latency \(latency), "
            + "supervision timeout \(Int(supervisionTimeout) * 10) ms"
    }

    // MARK: Units

    /// `duration` in 1.25 ms units; throws unless it is a whole number of them within 7.5 to 4000 ms.
    public static func intervalUnits(of duration: Duration) throws(ConnectionParametersError) -> UInt16 {
        let (seconds, attoseconds) = duration.components
        let text = millisecondsText(duration)
        guard duration >= .zero, attoseconds % 1_000_000_000_000 == 0, seconds < 10 else {
            throw duration > .zero && duration < .seconds(10) ? .intervalNotInSteps(text) : .intervalOutOfRange(text)
        }
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        guard microseconds % 1_250 == 0 else { throw .intervalNotInSteps(text) }
        let units = microseconds / 1_250
        guard units >= Int64(intervalUnits.lowerBound), units <= Int64(intervalUnits.upperBound) else {
            throw .intervalOutOfRange(text)
        }
        return UInt16(units)
    }

    /// `duration` in 10 ms units; throws unless it is a whole number of them within 100 to 32000 ms.
    public static func supervisionTimeoutUnits(of duration: Duration) throws(ConnectionParametersError) -> UInt16 {
        let (seconds, attoseconds) = duration.components
        let text = millisecondsText(duration)
        guard duration >= .zero, seconds < 100 else { throw .supervisionTimeoutOutOfRange(text) }
        guard attoseconds % 10_000_000_000_000_000 == 0 else { throw .supervisionTimeoutNotInSteps(text) }
        let units = seconds * 100 + attoseconds / 10_000_000_000_000_000
        guard units >= Int64(supervisionTimeoutUnits.lowerBound), units <= Int64(supervisionTimeoutUnits.upperBound) else {
            throw .supervisionTimeoutOutOfRange(text)
        }
        return UInt16(units)
    }

    // MARK: Text (the CLI's spelling)

    /// Parses `MS` or `MIN-MAX` (decimal milliseconds, e.g. `7.5` or `15-30`) into 1.25 ms units; a single
    /// value is both bounds. Throws the error naming the rule broken.
    public static func parseInterval(_ text: String) throws(ConnectionParametersError) -> (minimum: UInt16, maximum: UInt16) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { throw .intervalNotMilliseconds(text) }
        var units: [UInt16] = []
        for part in parts {
            guard let microseconds = microseconds(milliseconds: part) else { throw .intervalNotMilliseconds(text) }
            let shown = String(part)
            guard microseconds <= 4_000_000, microseconds >= 7_500 else { throw .intervalOutOfRange(shown) }
            guard microseconds % 1_250 == 0 else { throw .intervalNotInSteps(shown) }
            units.append(UInt16(microseconds / 1_250))
        }
        let minimum = units[0], maximum = units[units.count - 1]
        guard minimum <= maximum else {
            throw .intervalMinimumAboveMaximum(minimum: String(parts[0]), maximum: String(parts[1]))
        }
        return (minimum, maximum)
    }

    /// Parses a latency, a whole number from 0 to 499.
    public static func parseLatency(_ text: String) throws(ConnectionParametersError) -> UInt16 {
        guard text.allSatisfy(\.isASCIIDigitCharacter), let value = UInt16(text), latencies.contains(value) else {
            throw .latencyOutOfRange(text)
        }
        return value
    }

    /// Parses a supervision timeout in whole milliseconds (100 to 32000, a multiple of 10) into 10 ms units.
    public static func parseSupervisionTimeout(_ text: String) throws(ConnectionParametersError) -> UInt16 {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy(\.isASCIIDigitCharacter), let value = Int(text) else {
            throw .supervisionTimeoutNotMilliseconds(text)
        }
        guard (100 ... 32_000).contains(value) else { throw .supervisionTimeoutOutOfRange(text) }
        guard value % 10 == 0 else { throw .supervisionTimeoutNotInSteps(text) }
        return UInt16(value / 10)
    }

    /// `MIN-MAX` in milliseconds as ``parseInterval(_:)`` reads it, or one value when both are equal.
    public static func intervalText(minimum: UInt16, maximum: UInt16) -> String {
        minimum == maximum
            ? millisecondsText(intervalUnits: minimum)
            : "\(millisecondsText(intervalUnits: minimum))-\(millisecondsText(intervalUnits: maximum))"
    }

    /// `units` x 1.25 ms in milliseconds with no trailing zeros: 6 -> "7.5", 9 -> "11.25", 24 -> "30".
    public static func millisecondsText(intervalUnits units: UInt16) -> String {
        microsecondsText(Int64(units) * 1_250)
    }

    private static func millisecondsText(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return microsecondsText(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    private static func microsecondsText(_ microseconds: Int64) -> String {
        let whole = microseconds / 1_000
        var fraction = String(abs(microseconds % 1_000))
        guard fraction != "0" else { return "\(whole)" }
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(microseconds < 0 && whole == 0 ? "-" : "")\(whole).\(fraction)"
    }

    /// Decimal milliseconds (`15`, `7.5`, `11.250`) in whole microseconds; nil for anything else, or when
    /// it has a non-zero digit below the microsecond or more than ten integer digits.
    private static func microseconds(milliseconds text: Substring) -> Int64? {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count <= 2, let integer = pieces.first, !integer.isEmpty, integer.count <= 10,
              integer.allSatisfy(\.isASCIIDigitCharacter), let whole = Int64(integer) else { return nil }
        var microseconds = whole * 1_000
        if pieces.count == 2 {
            let fraction = pieces[1]
            guard !fraction.isEmpty, fraction.allSatisfy(\.isASCIIDigitCharacter),
                  fraction.dropFirst(3).allSatisfy({ $0 == "0" }) else { return nil }
            let digits = String(fraction.prefix(3))
            microseconds += (Int64(digits) ?? 0) * [100, 10, 1][digits.count - 1]
        }
        return microseconds
    }
}

extension Character {
    /// 0-9 only (not other scripts' digits, which `Int(_:)` would refuse anyway).
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
