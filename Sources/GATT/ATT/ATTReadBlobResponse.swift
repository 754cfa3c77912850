/// Read Blob Response (0x0D): up to ATT_MTU - 1 bytes of the value from the requested offset.
public struct ATTReadBlobResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.readBlobResponse
    public var value: [UInt8]

    public init(value: [UInt8]) { self.value = value }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        value = Array(reader.rest())
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.append(contentsOf: value)
    }
}
