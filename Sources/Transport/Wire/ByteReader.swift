/// A bounds-checked reader over received bytes: every read returns nil instead of trapping.
struct ByteReader {
    private(set) var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var isEmpty: Bool { bytes.isEmpty }
    var remaining: ArraySlice<UInt8> { bytes }

    mutating func readByte() -> UInt8? {
        guard let first = bytes.first else { return nil }
        bytes = bytes.dropFirst()
        return first
    }

    /// Reads a minimal ULEB128 of at most 5 bytes whose value fits 32 bits (PROTOCOL.md preamble).
    mutating func readULEB128() -> UInt32? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var copy = bytes
        for count in 1...5 {
            guard let byte = copy.first else { return nil }
            copy = copy.dropFirst()
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if count > 1 && byte == 0 { return nil }  // non-minimal
                guard value <= UInt64(UInt32.max) else { return nil }
                bytes = copy
                return UInt32(value)
            }
            shift += 7
        }
        return nil
    }

    mutating func readBytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count >= count else { return nil }
        let result = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return result
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` as a minimal ULEB128.
    mutating func appendULEB128(_ value: UInt32) {
        var rest = value
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            append(rest == 0 ? low : low | 0x80)
        } while rest != 0
    }
}

/// Number of bytes `value` takes as ULEB128.
func uleb128Size(_ value: UInt32) -> Int {
    value < 1 << 7 ? 1 : value < 1 << 14 ? 2 : value < 1 << 21 ? 3 : value < 1 << 28 ? 4 : 5
}
