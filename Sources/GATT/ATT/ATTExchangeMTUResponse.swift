/// Exchange MTU Response (0x03): the server's receive MTU. The effective ATT_MTU is the smaller of both, at least 23.
public struct ATTExchangeMTUResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverMTU: UInt16

    public init(serverMTU: UInt16) { self.serverMTU = serverMTU }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        serverMTU = try reader.uint16()
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.appendLittleEndian(serverMTU)
    }
}
