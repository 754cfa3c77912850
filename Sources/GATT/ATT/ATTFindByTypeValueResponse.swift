/// Find By Type Value Response (0x07): for each match its handle and the end of its group.
public struct ATTFindByTypeValueResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.findByTypeValueResponse
    /// At least one: `start` is the found attribute, `end` its group end handle.
    public var handles: [ATTHandleRange]

    public init(handles: [ATTHandleRange]) { self.handles = handles }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        guard reader.remaining >= 4 else { throw .truncated(opcode: Self.opcode, needed: 5, found: reader.length) }
        guard reader.remaining % 4 == 0 else { throw .invalidLength(opcode: Self.opcode, length: reader.length) }
        handles = []
        while reader.remaining > 0 { handles.append(try reader.handleRange()) }
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        for range in handles { range.encode(into: &out) }
    }
}
