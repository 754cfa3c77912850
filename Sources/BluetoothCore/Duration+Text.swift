extension Duration {
    /// Whole nanoseconds (truncated), for the kernel's clocks; the durations here are far below Int64's range.
    package var wholeNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// "20 s", "0.5 s", "1.25 s": seconds with at most three decimals, for error descriptions.
    package var secondsText: String {
        let milliseconds = wholeNanoseconds / 1_000_000
        let whole = milliseconds / 1000, fraction = abs(milliseconds % 1000)
        guard fraction != 0 else { return "\(whole) s" }
        var decimals = String(fraction)
        decimals = String(repeating: "0", count: 3 - decimals.count) + decimals
        while decimals.hasSuffix("0") { decimals.removeLast() }
        return "\(whole).\(decimals) s"
    }
}
