/// Exchange MTU Request (0x02): the client's receive MTU. The effective ATT_MTU is the smaller of both, at least 23.
public struct ATTExchangeMTURequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientMTU: UInt16

    public init(clientMTU: UInt16) { self.clientMTU = clientMTU }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        clientMTU = try reader.uint16()
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.appendLittleEndian(clientMTU)
    }
}
