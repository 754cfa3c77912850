/// Read Multiple Response (0x0F): the requested values concatenated, truncated to ATT_MTU - 1 bytes.
public struct ATTReadMultipleResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.readMultipleResponse
    public var value: [UInt8]

    public init(value: [UInt8]) { self.value = value }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        value = Array(reader.rest())
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.append(contentsOf: value)
    }
}
