import FoundationEssentials

/// The `--json` output of every subcommand: one object per line, made by JSONEncoder from a Codable struct.
/// Keys are sorted so the same values always print the same bytes; slashes stay as they are (file paths).
enum JSONLine {
    /// The JSON text of `value`, on one line.
    static func text(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our lines hold strings, integers, booleans and finite numbers only: encoding them cannot fail.
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The JSON text of `value` with the keys of `more` added: two objects printed as one.
    static func text(_ value: some Encodable, adding more: some Encodable) -> String {
        text(Merged(first: value, second: more))
    }

    private struct Merged<First: Encodable, Second: Encodable>: Encodable {
        let first: First
        let second: Second

        func encode(to encoder: any Encoder) throws {
            try first.encode(to: encoder)
            try second.encode(to: encoder)
        }
    }

    /// `elapsed` in seconds, rounded to hundredths.
    static func seconds(_ elapsed: Duration) -> Double {
        rounded(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, decimals: 2) ?? 0
    }

    /// `value` rounded to `decimals` places (nil when it is not finite: JSON has no NaN or infinity).
    static func rounded(_ value: Double, decimals: Int) -> Double? {
        guard value.isFinite else { return nil }
        var scale = 1.0
        for _ in 0 ..< decimals { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}

/// An optional field a JSON line prints as null, where synthesized Codable would leave the key out.
struct OrNull<Wrapped: Encodable>: Encodable {
    let value: Wrapped?

    init(_ value: Wrapped?) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}
