/// Prepare Write Request (0x16): queue `value` for `handle` at `offset` until an Execute Write Request.
public struct ATTPrepareWriteRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.prepareWriteRequest
    public var handle: UInt16
    public var offset: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, offset: UInt16, value: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.value = value
    }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        handle = try reader.uint16()
        offset = try reader.uint16()
        value = Array(reader.rest())
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.appendLittleEndian(handle)
        out.appendLittleEndian(offset)
        out.append(contentsOf: value)
    }
}
