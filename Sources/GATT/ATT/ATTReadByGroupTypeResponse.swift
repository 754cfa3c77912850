/// Read By Group Type Response (0x11): for each group its handle, end group handle and value (GATT: the
/// service UUID), every value of the same length.
public struct ATTReadByGroupTypeResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.readByGroupTypeResponse

    public struct Entry: Sendable, Equatable {
        public var handles: ATTHandleRange
        public var value: [UInt8]
        public init(handles: ATTHandleRange, value: [UInt8]) {
            self.handles = handles
            self.value = value
        }
    }

    /// At least one entry; values as long as the first entry's (at most 251 bytes).
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        let size = Int(try reader.uint8())
        guard size >= 4 else { throw .invalidField(opcode: Self.opcode, field: "entry length", value: size) }
        guard reader.remaining >= size else { throw .truncated(opcode: Self.opcode, needed: 2 + size, found: reader.length) }
        guard reader.remaining % size == 0 else { throw .invalidLength(opcode: Self.opcode, length: reader.length) }
        entries = []
        while reader.remaining > 0 {
            entries.append(Entry(handles: try reader.handleRange(), value: Array(try reader.bytes(size - 4))))
        }
    }

    /// Encodes the entries up to the first whose value length differs from the first entry's.
    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        let valueLength = min(entries.first?.value.count ?? 0, 251)
        out.append(UInt8(4 + valueLength))
        for entry in entries {
            guard entry.value.count == valueLength else { break }
            entry.handles.encode(into: &out)
            out.append(contentsOf: entry.value)
        }
    }
}
