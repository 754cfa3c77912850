import Framing

/// Bytes from hex as test vectors are written, with or without spaces: "0a 03 00" or "0a0300".
/// Traps on a typo in a literal (test vectors only), so a wrong vector fails loudly instead of shrinking.
public func bytes(_ hex: String) -> [UInt8] {
    guard let value = Hex.bytes(hex.filter { !$0.isWhitespace }) else {
        preconditionFailure("not a hex test vector: \(hex)")
    }
    return value
}

/// Lowercase hex of `bytes`: "c01004".
public func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.string(bytes) }

/// Lowercase hex of `bytes`, the bytes' digit pairs joined by `separator`: "c0 10 04" with " ".
public func hex(_ bytes: some Sequence<UInt8>, separator: String) -> String {
    bytes.map { Hex.string(CollectionOfOne($0)) }.joined(separator: separator)
}
