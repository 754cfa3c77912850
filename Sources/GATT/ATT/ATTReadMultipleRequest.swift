/// Read Multiple Request (0x0E): the values of two or more handles, concatenated in one response.
public struct ATTReadMultipleRequest: ATTPDUCoding {
    public static let opcode = ATTOpcode.readMultipleRequest
    /// Two or more handles.
    public var handles: [UInt16]

    public init(handles: [UInt16]) { self.handles = handles }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        guard reader.remaining >= 4 else { throw .truncated(opcode: Self.opcode, needed: 5, found: reader.length) }
        guard reader.remaining % 2 == 0 else { throw .invalidLength(opcode: Self.opcode, length: reader.length) }
        handles = []
        while reader.remaining > 0 { handles.append(try reader.uint16()) }
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        for handle in handles { out.appendLittleEndian(handle) }
    }
}
