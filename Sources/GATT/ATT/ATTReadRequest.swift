/// Read Request (0x0A): the value of `handle`.
public struct ATTReadRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.readRequest
    public var handle: UInt16

    public init(handle: UInt16) { self.handle = handle }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        handle = try reader.uint16()
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.appendLittleEndian(handle)
    }
}
