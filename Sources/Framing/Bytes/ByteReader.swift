/// A read cursor over one packet's bytes: every read is length-checked and throws instead of trapping.
public struct ByteReader: Sendable {
    /// The bytes not read yet.
    public private(set) var remaining: ArraySlice<UInt8>

    /// A reader positioned at the first byte of `bytes`.
    public init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
    }

    /// True when every byte was read.
    public var isAtEnd: Bool { remaining.isEmpty }

    /// Reads one byte; `field` names it in the error when the packet ends first.
    public mutating func readByte(_ field: String) throws(FramingError) -> UInt8 {
        guard let byte = remaining.first else { throw .truncatedPacket(field: field) }
        remaining = remaining.dropFirst()
        return byte
    }

    /// Reads a ULEB128 value of at most 5 bytes, rejecting non-minimal encodings and values above 2^32 - 1.
    public mutating func readULEB128(_ field: String) throws(FramingError) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<ULEB128.maximumCount {
            let byte = try readByte(field)
            let group = UInt32(byte & 0x7F)
            if index == ULEB128.maximumCount - 1, group > 0x0F { throw .malformedULEB128(field: field) }
            value |= group << (7 * UInt32(index))
            if byte & 0x80 == 0 {
                // Minimal: only a lone byte may be zero.
                if byte == 0, index > 0 { throw .malformedULEB128(field: field) }
                return value
            }
        }
        throw .malformedULEB128(field: field)
    }

    /// Returns every byte not read yet (a slice of the packet, not a copy) and moves to the end.
    public mutating func readRemaining() -> ArraySlice<UInt8> {
        defer { remaining = remaining[remaining.endIndex...] }
        return remaining
    }
}
