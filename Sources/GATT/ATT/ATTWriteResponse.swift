/// Write Response (0x13): the Write Request succeeded.
public struct ATTWriteResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.writeResponse

    public init() {}

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        try ATTReader(pdu, expecting: Self.opcode).end()
    }

    public func encode(into out: inout [UInt8]) { out.append(Self.opcode) }
}
