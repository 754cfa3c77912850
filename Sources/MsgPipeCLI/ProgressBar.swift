/// One line of transfer progress for a terminal: `[#####.....]  50%  512.0 KiB / 1.0 MiB  40.2 KiB/s`.
/// Pure rendering; ``ProgressReporter`` decides when to draw it.
struct ProgressBar: Equatable {
    /// Bytes of the whole transfer (0 when unknown: then only the amount and rate are shown).
    var total: Int
    /// Characters between the brackets.
    var width = 30

    /// The line for `done` bytes after `elapsed`; `done` above `total` shows as complete.
    func render(done: Int, elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Self.amount(Int(Double(done) / seconds)) + "/s" : "-"
        guard total > 0 else { return "\(Self.amount(done))  \(rate)" }
        let fraction = min(Double(max(done, 0)) / Double(total), 1)
        let filled = Int(fraction * Double(width))
        let percent = String(Int(fraction * 100))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        return "[\(bar)] \(String(repeating: " ", count: 3 - percent.count))\(percent)%  "
            + "\(Self.amount(min(done, total))) / \(Self.amount(total))  \(rate)"
    }

    /// Bytes in B, KiB, MiB or GiB with one decimal.
    static func amount(_ bytes: Int) -> String {
        var value = Double(bytes)
        for unit in ["B", "KiB", "MiB"] {
            if value < 1024 { return unit == "B" ? "\(bytes) B" : Self.oneDecimal(value) + " " + unit }
            value /= 1024
        }
        return Self.oneDecimal(value) + " GiB"
    }

    private static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
