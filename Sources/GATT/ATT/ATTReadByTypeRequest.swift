/// Read By Type Request (0x08): the values of the attributes of type `type` in `range` (GATT: characteristic declarations, 0x2803).
public struct ATTReadByTypeRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.readByTypeRequest
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
