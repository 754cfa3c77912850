/// Bytes from a hex string with optional spaces: "0a 03 00".
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0 }
}
