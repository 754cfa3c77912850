/// One ATT PDU type: a fixed opcode, a length-checked decoder and an encoder into a caller's buffer.
///
/// The decoded and encoded bytes include the opcode byte.
public protocol ATTPDUCoding: Sendable, Equatable {
    static var opcode: UInt8 { get }
    init(decoding pdu: ArraySlice<UInt8>) throws(ATTDecodeError)
    func encode(into out: inout [UInt8])
}

extension ATTPDUCoding {
    /// The PDU's bytes, opcode first.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }
}
