import Framing

/// The frame every msgpipe journal record has: `magic type length[4] payload crc32[4]`, length and CRC
/// big-endian, the CRC-32 (zlib's) over type, length and payload. Each journal has its own magic and types
/// (PROTOCOL.md 6.6, 3.10).
package enum JournalFrame {
    package static let headerCount = 6
    package static let trailerCount = 4

    /// One framed record.
    package static func encode(magic: UInt8, type: UInt8, payload: [UInt8]) -> [UInt8] {
        var out = [magic, type] + bigEndian(UInt32(payload.count)) + payload
        var crc = CRC32()
        crc.update(out.dropFirst())
        out += bigEndian(crc.value)
        return out
    }

    /// How the bytes at the start of a journal's remaining bytes read.
    package enum Reading: Equatable {
        /// A whole record of `count` bytes whose CRC holds.
        case frame(type: UInt8, payload: ArraySlice<UInt8>, count: Int)
        /// The bytes end inside a record whose header reads, or inside a header that could begin one.
        case truncated
        /// A wrong magic, type, length (over `maximumPayload`) or CRC.
        case corrupt
    }

    /// Reads the record at the start of `bytes`, of one of `types`.
    package static func read(_ bytes: ArraySlice<UInt8>, magic: UInt8, types: [UInt8], maximumPayload: Int) -> Reading {
        let start = bytes.startIndex
        guard bytes.count >= headerCount else {
            let couldBegin = bytes.isEmpty || (bytes[start] == magic && (bytes.count < 2 || types.contains(bytes[start + 1])))
            return couldBegin ? .truncated : .corrupt
        }
        guard bytes[start] == magic, types.contains(bytes[start + 1]) else { return .corrupt }
        let length = bytes[(start + 2)..<(start + headerCount)].reduce(0) { $0 << 8 | Int($1) }
        guard length <= maximumPayload else { return .corrupt }
        let count = headerCount + length + trailerCount
        guard bytes.count >= count else { return .truncated }
        let end = start + headerCount + length
        let stored = bytes[end..<(start + count)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard CRC32.checksum(bytes[(start + 1)..<end]) == stored else { return .corrupt }
        return .frame(type: bytes[start + 1], payload: bytes[(start + headerCount)..<end], count: count)
    }
}

package func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
     UInt8(truncatingIfNeeded: value)]
}
