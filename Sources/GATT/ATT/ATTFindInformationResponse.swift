/// Find Information Response (0x05): handle-type pairs, all 16-bit (format 1) or all 128-bit (format 2).
public struct ATTFindInformationResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.findInformationResponse

    public struct Entry: Sendable, Equatable {
        public var handle: UInt16
        public var type: BluetoothUUID
        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    /// At least one entry; every entry's type has the wire length of the first.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        let format = try reader.uint8()
        let uuidLength: Int
        switch format {
        case 1: uuidLength = 2
        case 2: uuidLength = 16
        default: throw .invalidField(opcode: Self.opcode, field: "format", value: Int(format))
        }
        let size = 2 + uuidLength
        guard reader.remaining >= size else { throw .truncated(opcode: Self.opcode, needed: 2 + size, found: reader.length) }
        guard reader.remaining % size == 0 else { throw .invalidLength(opcode: Self.opcode, length: reader.length) }
        entries = []
        while reader.remaining > 0 {
            let handle = try reader.uint16()
            let type = uuidLength == 2 ? BluetoothUUID.bit16(try reader.uint16()) : BluetoothUUID(littleEndian: try reader.bytes(16))
            entries.append(Entry(handle: handle, type: type))
        }
    }

    /// Encodes the entries up to the first whose UUID length differs from the first entry's.
    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        let uuidLength = entries.first?.type.wireLength ?? 2
        out.append(uuidLength == 2 ? 1 : 2)
        for entry in entries {
            guard entry.type.wireLength == uuidLength else { break }
            out.appendLittleEndian(entry.handle)
            entry.type.encode(into: &out)
        }
    }
}
