/// Error Response (0x01): the request `requestOpcode` on `handle` failed with `error`.
public struct ATTErrorResponse: ATTPDUCoding {
    public static let opcode = ATTOpcode.errorResponse
    public var requestOpcode: UInt8
    public var handle: UInt16
    public var error: ATTErrorCode

    public init(requestOpcode: UInt8, handle: UInt16, error: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.error = error
    }

    public init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError) {
        var reader = try ATTReader(pdu, expecting: Self.opcode)
        requestOpcode = try reader.uint8()
        handle = try reader.uint16()
        error = ATTErrorCode(rawValue: try reader.uint8())
        try reader.end()
    }

    public func encode(into out: inout [UInt8]) {
        out.append(Self.opcode)
        out.append(requestOpcode)
        out.appendLittleEndian(handle)
        out.append(error.rawValue)
    }
}
