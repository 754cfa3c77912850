/// Read Blob Request (0x0C): the value of `handle` from `offset` (the parts of a long value after the first).
public struct ATTReadBlobRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.readBlobRequest
    public var handle: UInt16
    public var offset: UInt16

    public init(handle: UInt16, offset: UInt16) {
        self.handle = handle
        self.offset = offset
    }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        handle = try reader.uint16()
        offset = try reader.uint16()
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.appendLittleEndian(handle)
        out.appendLittleEndian(offset)
    }
}
