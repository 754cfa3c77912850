/// Read By Type Response (0x09): handle-value pairs, every value of the same length.
public struct ATTReadByTypeResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.readByTypeResponse

    public struct Entry: Sendable, Equatable {
        public var handle: UInt16
        public var value: [UInt8]
        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    /// At least one entry; values as long as the first entry's (at most 253 bytes).
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        let size = Int(try reader.uint8())
        guard size >= 2 else { throw .invalidField(opcode: Self.opcode, field: "entry length", value: size) }
        guard reader.remaining >= size else { throw .truncated(opcode: Self.opcode, needed: 2 + size, found: reader.length) }
        guard reader.remaining % size == 0 else { throw .invalidLength(opcode: Self.opcode, length: reader.length) }
        entries = []
        while reader.remaining > 0 {
            entries.append(Entry(handle: try reader.uint16(), value: Array(try reader.bytes(size - 2))))
        }
    }

    /// Encodes the entries up to the first whose value length differs from the first entry's.
    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        let valueLength = min(entries.first?.value.count ?? 0, 253)
        out.append(UInt8(2 + valueLength))
        for entry in entries {
            guard entry.value.count == valueLength else { break }
            out.appendLittleEndian(entry.handle)
            out.append(contentsOf: entry.value)
        }
    }
}
