/// Lowercase hex for `msgpipe frame` / `deframe`: one packet per line.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Appends the lowercase hex of `bytes` to `out`.
    static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
    }

    /// Decodes hex digits (either case) into `out`, replacing its contents; nil when `text` is not hex.
    static func decode(_ text: ArraySlice<UInt8>, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        guard text.count % 2 == 0 else { return false }
        var index = text.startIndex
        while index < text.endIndex {
            guard let high = value(text[index]), let low = value(text[index + 1]) else { return false }
            out.append(high << 4 | low)
            index += 2
        }
        return true
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
