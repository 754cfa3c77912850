import Framing

/// The 2-byte checks Transport adds to packets (PROTOCOL.md 3.3 and 3.4): the low 16 bits of a CRC-32.
enum Checksum {
    /// The check of a data packet: CRC-32 over message id (u32 LE), the stream offset of the packet's first
    /// data byte (u32 LE) and the packet bytes before the check; its low 16 bits.
    static func packetCheck(messageID: UInt32, streamOffset: Int, packet: ArraySlice<UInt8>) -> UInt16 {
        var prefix: [UInt8] = []
        prefix.reserveCapacity(8)
        prefix.appendUInt32LittleEndian(messageID)
        prefix.appendUInt32LittleEndian(UInt32(truncatingIfNeeded: streamOffset))
        var crc = CRC32()
        crc.update(prefix)
        crc.update(packet)
        return UInt16(truncatingIfNeeded: crc.value)
    }

    /// The check of a control packet: low 16 bits of CRC-32 over the bytes before it.
    static func controlCheck(_ packet: ArraySlice<UInt8>) -> UInt16 {
        UInt16(truncatingIfNeeded: CRC32.checksum(packet))
    }
}

extension Array where Element == UInt8 {
    mutating func appendUInt16LittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
}

extension ArraySlice where Element == UInt8 {
    /// The little-endian UInt16 in the last two bytes (the caller checked `count >= 2`).
    var trailingUInt16LE: UInt16 {
        UInt16(self[endIndex - 2]) | UInt16(self[endIndex - 1]) << 8
    }
}
