import Framing

/// The one-line text form of a key: `PREFIX:HEX` (64 lowercase hex digits for 32 bytes), as written by
/// `msgpipe keygen` (PROTOCOL.md 6.1). Surrounding whitespace and a trailing newline are ignored.
enum KeyText {
    static let keySize = 32

    static func format(prefix: String, _ bytes: some Sequence<UInt8>) -> String {
        "\(prefix):\(Hex.string(bytes))"
    }

    /// The 32 key bytes of `text`; `bareHexAllowed` also accepts the hex digits without the prefix.
    static func parse(_ text: some StringProtocol, prefix: String, bareHexAllowed: Bool = false)
        throws(SecureError) -> [UInt8]
    {
        let line = text.trimmingASCIIWhitespace()
        let digits: Substring
        if line.hasPrefix(prefix + ":") {
            digits = line.dropFirst(prefix.count + 1)
        } else if bareHexAllowed, !line.contains(":") {
            digits = line[...]
        } else {
            throw .invalidKey("expected one line '\(prefix):' followed by \(keySize * 2) hex digits")
        }
        guard digits.utf8.count == keySize * 2, let bytes = Hex.bytes(digits) else {
            throw .invalidKey("'\(prefix)' key must be \(keySize * 2) hex digits (\(keySize) bytes)")
        }
        return bytes
    }
}

extension StringProtocol {
    /// The text without leading and trailing ASCII spaces, tabs, CRs and newlines.
    func trimmingASCIIWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        let text = Substring(self)
        guard let first = text.firstIndex(where: { !isSpace($0) }),
            let last = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return text[first...last]
    }
}
