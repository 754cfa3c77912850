import GATT
/// A little-endian cursor over management packet bytes; every read is length-checked and throws
/// ``BluetoothError/malformedManagementPacket(_:)`` instead of trapping.
struct ManagementReader {
    private let bytes: ArraySlice<UInt8>
    private(set) var position: Int
    /// Names the structure being read, for error messages.
    let context: String

    init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.bytes = bytes
        self.position = bytes.startIndex
        self.context = context
    }

    var remaining: Int { bytes.endIndex - position }

    mutating func bytes(_ count: Int) throws(BluetoothError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw .malformedManagementPacket(
                "\(context): needs \(count) more bytes at offset \(position - bytes.startIndex), has \(remaining)")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func uint8() throws(BluetoothError) -> UInt8 {
        try bytes(1).first ?? 0
    }

    mutating func uint16() throws(BluetoothError) -> UInt16 {
        let b = try bytes(2)
        return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
    }

    mutating func uint32() throws(BluetoothError) -> UInt32 {
        let b = try bytes(4)
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[b.startIndex + $1]) << (8 * UInt32($1)) }
    }

    mutating func address() throws(BluetoothError) -> BluetoothAddress {
        BluetoothAddress(littleEndianBytes: Array(try bytes(6)))
    }

    /// The rest of the bytes.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }
}

extension Array where Element == UInt8 {
    mutating func appendManagementField(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendManagementField(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
