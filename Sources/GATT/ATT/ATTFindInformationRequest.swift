/// Find Information Request (0x04): the handles and types of the attributes in `range`.
public struct ATTFindInformationRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.findInformationRequest
    public var range: ATTHandleRange

    public init(range: ATTHandleRange) { self.range = range }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        range = try reader.handleRange()
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        range.encode(into: &out)
    }
}
