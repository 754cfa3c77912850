/// Write Request (0x12): write `value` to `handle`; answered by a Write Response or an Error Response.
public struct ATTWriteRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.writeRequest
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        handle = try reader.uint16()
        value = Array(reader.rest())
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.appendLittleEndian(handle)
        out.append(contentsOf: value)
    }
}
