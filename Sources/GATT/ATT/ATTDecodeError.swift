/// Why bytes from the peer are not a well-formed ATT PDU (Bluetooth Core Vol 3 Part F, section 3.4).
public enum ATTDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The PDU has no opcode byte.
    case empty
    /// The opcode is not one this implementation decodes.
    case unknownOpcode(UInt8)
    /// The PDU was handed to the decoder of another opcode.
    case wrongOpcode(expected: UInt8, found: UInt8)
    /// The PDU ends before its fields do.
    case truncated(opcode: UInt8, needed: Int, found: Int)
    /// The PDU's length does not fit its layout (trailing bytes, a list not a multiple of its entry size).
    case invalidLength(opcode: UInt8, length: Int)
    /// A field holds a value the layout forbids.
    case invalidField(opcode: UInt8, field: String, value: Int)

    public var description: String {
        switch self {
        case .empty: "empty ATT PDU"
        case let .unknownOpcode(opcode): "unknown ATT opcode 0x\(hex(opcode))"
        case let .wrongOpcode(expected, found): "ATT opcode 0x\(hex(found)) where 0x\(hex(expected)) was expected"
        case let .truncated(opcode, needed, found):
            "ATT PDU 0x\(hex(opcode)) truncated: \(found) bytes, at least \(needed) needed"
        case let .invalidLength(opcode, length): "ATT PDU 0x\(hex(opcode)) has an invalid length of \(length) bytes"
        case let .invalidField(opcode, field, value): "ATT PDU 0x\(hex(opcode)): invalid \(field) \(value)"
        }
    }
}

/// Two lowercase hex digits per byte, at least `width` digits.
func hex(_ value: some BinaryInteger, width: Int = 2) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
