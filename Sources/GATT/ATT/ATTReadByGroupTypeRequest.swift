/// Read By Group Type Request (0x10): the grouping attributes of type `type` in `range` (GATT: primary services, 0x2800).
public struct ATTReadByGroupTypeRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public var range: ATTHandleRange
    public var type: BluetoothUUID

    public init(range: ATTHandleRange, type: BluetoothUUID) {
        self.range = range
        self.type = type
    }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        range = try reader.handleRange()
        type = try reader.uuidToEnd()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        range.encode(into: &out)
        type.encode(into: &out)
    }
}
