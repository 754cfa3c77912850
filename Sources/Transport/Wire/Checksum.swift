import CZlib

/// CRC-32 (ISO-HDLC, zlib's `crc32`) helpers for the message trailer and the per-packet check (PROTOCOL.md 3.3).
enum Checksum {
    static func crc32(_ bytes: ArraySlice<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            UInt32(CZlib.crc32(UInt(crc), buffer.baseAddress, UInt32(buffer.count)))
        }
    }

    /// The 2-byte packet check: the low 16 bits of CRC-32 over message id (u32 LE), segment index (u32 LE)
    /// and the packet bytes before the check.
    static func packetCheck(messageID: UInt32, segment: Int, packet: ArraySlice<UInt8>) -> UInt16 {
        let index = UInt32(truncatingIfNeeded: segment)
        let prefix: [UInt8] = [
            UInt8(truncatingIfNeeded: messageID), UInt8(truncatingIfNeeded: messageID >> 8),
            UInt8(truncatingIfNeeded: messageID >> 16), UInt8(truncatingIfNeeded: messageID >> 24),
            UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8),
            UInt8(truncatingIfNeeded: index >> 16), UInt8(truncatingIfNeeded: index >> 24),
        ]
        return UInt16(truncatingIfNeeded: crc32(packet, continuing: crc32(prefix[...])))
    }

    /// The 2-byte check of a control packet: low 16 bits of CRC-32 over the bytes before it.
    static func controlCheck(_ packet: ArraySlice<UInt8>) -> UInt16 {
        UInt16(truncatingIfNeeded: crc32(packet))
    }
}

extension Array where Element == UInt8 {
    mutating func appendUInt16LE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendUInt32LE(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}

extension ArraySlice where Element == UInt8 {
    /// The little-endian UInt16 in the last two bytes (caller checks count >= 2).
    var trailingUInt16LE: UInt16 {
        UInt16(self[endIndex - 2]) | UInt16(self[endIndex - 1]) << 8
    }
}
