/// Read Response (0x0B): the first ATT_MTU - 1 bytes of the attribute's value.
public struct ATTReadResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.readResponse
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
