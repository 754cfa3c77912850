/// A cursor over one ATT PDU: reads the opcode and little-endian fields, throwing when the PDU ends early.
struct ATTReader {
    let opcode: UInt8
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    /// Starts after the opcode byte, which must equal `expected`.
    init(_ pdu: ArraySlice<UInt8>, expecting expected: UInt8) throws(ATTDecodeError) {
        guard let first = pdu.first else { throw .empty }
        guard first == expected else { throw .wrongOpcode(expected: expected, found: first) }
        opcode = first
        bytes = pdu
        index = pdu.startIndex + 1
    }

    /// Bytes left to read.
    var remaining: Int { bytes.endIndex - index }

    /// The total length of the PDU, opcode included.
    var length: Int { bytes.count }

    mutating func uint8() throws(ATTDecodeError) -> UInt8 {
        try need(1)
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16() throws(ATTDecodeError) -> UInt16 {
        try need(2)
        defer { index += 2 }
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }

    mutating func bytes(_ count: Int) throws(ATTDecodeError) -> ArraySlice<UInt8> {
        try need(count)
        defer { index += count }
        return bytes[index..<index + count]
    }

    /// Everything left, as a slice of the PDU.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { index = bytes.endIndex }
        return bytes[index...]
    }

    /// A 16- or 128-bit UUID filling exactly the rest of the PDU.
    mutating func uuidToEnd() throws(ATTDecodeError) -> BluetoothUUID {
        switch remaining {
        case 2: return .bit16(try uint16())
        case 16: return try BluetoothUUID(littleEndian: bytes(16))
        case 0...1: throw .truncated(opcode: opcode, needed: length - remaining + 2, found: length)
        default: throw .invalidLength(opcode: opcode, length: length)
        }
    }

    /// Throws unless the PDU is fully consumed: fixed-size PDUs carry no trailing bytes.
    func end() throws(ATTDecodeError) {
        guard remaining == 0 else { throw .invalidLength(opcode: opcode, length: length) }
    }

    private func need(_ count: Int) throws(ATTDecodeError) {
        guard remaining >= count else {
            throw .truncated(opcode: opcode, needed: length - remaining + count, found: length)
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` little-endian, as every ATT field is carried.
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
}
