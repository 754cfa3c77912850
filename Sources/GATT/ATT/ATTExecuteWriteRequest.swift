/// Execute Write Request (0x18): write (flags 0x01) or cancel (flags 0x00) every prepared write of the client.
public struct ATTExecuteWriteRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.executeWriteRequest
    /// 0x00 cancels, 0x01 writes; the server answers any other value with Invalid PDU.
    public var flags: UInt8

    public static let cancel: UInt8 = 0x00
    public static let write: UInt8 = 0x01

    public init(flags: UInt8) { self.flags = flags }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        flags = try reader.uint8()
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.append(flags)
    }
}
