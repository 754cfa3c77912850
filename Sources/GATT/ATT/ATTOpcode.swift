/// ATT opcodes (Bluetooth Core Vol 3 Part F, 3.4.8). Bit 6 marks a command, bit 7 a signed PDU.
public enum ATTOpcode {
    public static let errorResponse: UInt8 = 0x01
    public static let exchangeMTURequest: UInt8 = 0x02
    public static let exchangeMTUResponse: UInt8 = 0x03
    public static let findInformationRequest: UInt8 = 0x04
    public static let findInformationResponse: UInt8 = 0x05
    public static let findByTypeValueRequest: UInt8 = 0x06
    public static let findByTypeValueResponse: UInt8 = 0x07
    public static let readByTypeRequest: UInt8 = 0x08
    public static let readByTypeResponse: UInt8 = 0x09
    public static let readRequest: UInt8 = 0x0A
    public static let readResponse: UInt8 = 0x0B
    public static let readBlobRequest: UInt8 = 0x0C
    public static let readBlobResponse: UInt8 = 0x0D
    public static let readMultipleRequest: UInt8 = 0x0E
    public static let readMultipleResponse: UInt8 = 0x0F
    public static let readByGroupTypeRequest: UInt8 = 0x10
    public static let readByGroupTypeResponse: UInt8 = 0x11
    public static let writeRequest: UInt8 = 0x12
    public static let writeResponse: UInt8 = 0x13
    public static let prepareWriteRequest: UInt8 = 0x16
    public static let prepareWriteResponse: UInt8 = 0x17
    public static let executeWriteRequest: UInt8 = 0x18
    public static let executeWriteResponse: UInt8 = 0x19
    public static let handleValueNotification: UInt8 = 0x1B
    public static let handleValueIndication: UInt8 = 0x1D
    public static let handleValueConfirmation: UInt8 = 0x1E
    public static let writeCommand: UInt8 = 0x52

    /// True for commands (bit 6 set): a server never answers them, not even when it does not know them.
    public static func isCommand(_ opcode: UInt8) -> Bool { opcode & 0x40 != 0 }

    /// The ATT MTU every bearer starts with on LE (Vol 3 Part F, 3.2.8).
    public static let defaultMTU = 23
    /// The largest ATT MTU: a 512-byte attribute value plus a 5-byte Prepare Write header.
    public static let maximumMTU = 517
    /// The longest attribute value (Vol 3 Part F, 3.2.9).
    public static let maximumAttributeLength = 512

    /// The longest value one notification, indication or Write Command carries at `mtu`: ATT_MTU - 3, but
    /// never more than an attribute holds (512 at the largest MTU, 517).
    public static func maximumValueLength(mtu: Int) -> Int { min(mtu - 3, maximumAttributeLength) }
}
