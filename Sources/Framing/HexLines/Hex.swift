/// Lowercase hex: one packet per line in `msgpipe frame` / `deframe`, keys and test vectors elsewhere.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Appends the lowercase hex of `bytes` to `out`.
    public static func append(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
    }

    /// The lowercase hex of `bytes` as a string.
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        append(bytes, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The 8 lowercase hex digits of `value`, most significant first (a CRC-32 as people read it: "cbf43926").
    public static func string(_ value: UInt32) -> String {
        withUnsafeBytes(of: value.bigEndian) { string($0) }
    }

    /// Decodes hex digits (either case) into `out`, replacing its contents; false when `text` is not hex.
    public static func decode(_ text: ArraySlice<UInt8>, into out: inout [UInt8]) -> Bool {
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

    /// The bytes of the hex digits in `text`, or nil when `text` is not hex.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        var out: [UInt8] = []
        return decode(Array(text.utf8)[...], into: &out) ? out : nil
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
