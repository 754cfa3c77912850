/// Handle Value Confirmation (0x1E): the client received an indication.
public struct ATTHandleValueConfirmation: ATTPDUCoding {
    public static let opcode = ATTOpcode.handleValueConfirmation

    public init() {}

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        try ATTReader(pdu, expecting: Self.opcode).end()
    }

    public func encode(into out: inout [UInt8]) { out.append(Self.opcode) }
}
