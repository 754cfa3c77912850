/// Unsigned LEB128 as msgpipe uses it: 7 bits per byte, least significant group first, at most 5 bytes.
public enum ULEB128 {
    /// The longest encoding msgpipe accepts (enough for any `UInt32`).
    public static let maximumCount = 5

    /// How many bytes the minimal encoding of `value` takes (1 to 5).
    @inlinable
    public static func encodedCount(_ value: UInt32) -> Int {
        var count = 1
        var rest = value >> 7
        while rest != 0 {
            count += 1
            rest >>= 7
        }
        return count
    }
}

extension Array where Element == UInt8 {
    /// Appends the minimal ULEB128 encoding of `value`.
    @inlinable
    public mutating func appendULEB128(_ value: UInt32) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(truncatingIfNeeded: rest))
    }

    /// Appends `value` as 4 bytes, least significant first.
    @inlinable
    public mutating func appendUInt32LittleEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 24))
    }
}
