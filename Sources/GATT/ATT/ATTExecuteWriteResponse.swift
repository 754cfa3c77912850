/// Execute Write Response (0x19): the prepared writes were written (or cancelled).
public struct ATTExecuteWriteResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.executeWriteResponse

    public init() {}

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        try ATTReader(pdu, expecting: Self.opcode).end()
    }

    public func encode(into out: inout [UInt8]) { out.append(Self.opcode) }
}
