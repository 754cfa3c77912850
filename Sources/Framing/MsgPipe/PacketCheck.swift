/// The 2-byte check a packet may end with (PROTOCOL 3.3, 3.4): the low 16 bits, little-endian, of a CRC-32.
///
/// A data packet's check covers message id (u32 LE), the stream offset of its first data byte (u32 LE; 0 for
/// a Start packet) and the packet's bytes before the check; a control packet's check covers its own bytes
/// before the check. Computed without allocating.
public enum PacketCheck {
    /// Bytes of a check.
    public static let count = 2

    /// The check of a data packet whose bytes before the check are `bytes`.
    @inlinable
    public static func data(messageID: UInt32, streamOffset: Int, bytes: ArraySlice<UInt8>) -> UInt16 {
        let prefix = (UInt64(messageID) | UInt64(UInt32(truncatingIfNeeded: streamOffset)) << 32).littleEndian
        var crc = CRC32()
        withUnsafeBytes(of: prefix) { crc.update($0) }
        crc.update(bytes)
        return UInt16(truncatingIfNeeded: crc.value)
    }

    /// The check of a control packet whose bytes before the check are `bytes`.
    @inlinable
    public static func control(bytes: ArraySlice<UInt8>) -> UInt16 {
        UInt16(truncatingIfNeeded: CRC32.checksum(bytes))
    }

    /// Appends the data-packet check over everything in `out` (the packet so far).
    @inlinable
    public static func appendData(messageID: UInt32, streamOffset: Int, to out: inout [UInt8]) {
        append(data(messageID: messageID, streamOffset: streamOffset, bytes: out[...]), to: &out)
    }

    /// Appends the control-packet check over everything in `out` (the packet so far).
    @inlinable
    public static func appendControl(to out: inout [UInt8]) {
        append(control(bytes: out[...]), to: &out)
    }

    /// True when `packet` ends with a 2-byte check that verifies as a data packet's.
    @inlinable
    public static func verifiesData(_ packet: ArraySlice<UInt8>, messageID: UInt32, streamOffset: Int) -> Bool {
        guard packet.count >= count else { return false }
        return data(messageID: messageID, streamOffset: streamOffset, bytes: packet.dropLast(count)) == trailing(packet)
    }

    /// True when `packet` ends with a 2-byte check that verifies as a control packet's.
    @inlinable
    public static func verifiesControl(_ packet: ArraySlice<UInt8>) -> Bool {
        guard packet.count >= count else { return false }
        return control(bytes: packet.dropLast(count)) == trailing(packet)
    }

    @inlinable
    static func append(_ check: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: check))
        out.append(UInt8(truncatingIfNeeded: check >> 8))
    }

    /// The little-endian UInt16 in the last two bytes (`packet.count >= 2`).
    @inlinable
    static func trailing(_ packet: ArraySlice<UInt8>) -> UInt16 {
        UInt16(packet[packet.endIndex - 2]) | UInt16(packet[packet.endIndex - 1]) << 8
    }
}
