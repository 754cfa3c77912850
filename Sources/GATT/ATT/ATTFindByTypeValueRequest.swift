/// Find By Type Value Request (0x06): attributes in `range` of 16-bit type `type` whose value equals `value`
/// (GATT uses it to discover a primary service by UUID).
public struct ATTFindByTypeValueRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.findByTypeValueRequest
    public var range: ATTHandleRange
    public var type: UInt16
    public var value: [UInt8]

    public init(range: ATTHandleRange, type: UInt16, value: [UInt8]) {
        self.range = range
        self.type = type
        self.value = value
    }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        range = try reader.handleRange()
        type = try reader.uint16()
        value = Array(reader.rest())
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        range.encode(into: &out)
        out.appendLittleEndian(type)
        out.append(contentsOf: value)
    }
}
