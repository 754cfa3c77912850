/// The header a data message's Start packet carries after the header byte (PROTOCOL 1.2).
public struct MessageHeader: Equatable, Sendable {
    /// The format version this codec speaks.
    public static let version: UInt8 = 1
    /// The version/kind byte of a data message.
    static let dataKindByte: UInt8 = version << 4 | 0
    /// The version/kind byte of a control packet.
    static let controlKindByte: UInt8 = version << 4 | 1
    /// The largest body a message may announce: its stream (body and CRC) must stay within 32-bit offsets.
    public static let maximumLength = Int(UInt32.max) - 4

    /// Flags; `.response` is set exactly when `correlationID` is present.
    public private(set) var flags: MessageFlags
    /// The sender's id for the message.
    public var messageID: UInt32
    /// Body length in bytes (as carried).
    public var length: UInt32
    /// The message id of the request this message answers (present iff `.response`).
    public private(set) var correlationID: UInt32?

    /// A header; passing a `correlationID` sets `.response`, and `.response` without one correlates to 0.
    public init(messageID: UInt32, length: UInt32, flags: MessageFlags = [], correlationID: UInt32? = nil) {
        var flags = flags
        if correlationID != nil { flags.insert(.response) }
        self.flags = flags
        self.messageID = messageID
        self.length = length
        self.correlationID = flags.contains(.response) ? (correlationID ?? 0) : nil
    }

    /// Decodes the header of a data message, the version/kind byte included.
    public init(decoding reader: inout ByteReader) throws(FramingError) {
        let versionKind = try reader.readByte("version/kind byte")
        guard versionKind >> 4 == Self.version else { throw .unsupportedVersion(versionKind >> 4) }
        guard versionKind & 0x0F == 0 else { throw .unknownMessageKind(versionKind & 0x0F) }
        let flags = MessageFlags(rawValue: try reader.readByte("flags"))
        let messageID = try reader.readULEB128("message id")
        let length = try reader.readULEB128("length")
        if !flags.isDisjoint(with: .reserved) {
            throw .reservedFlags(flags.intersection(.reserved).rawValue, messageID: messageID)
        }
        let correlationID = flags.contains(.response) ? try reader.readULEB128("correlation id") : nil
        self.init(messageID: messageID, length: length, flags: flags, correlationID: correlationID)
    }

    /// Bytes `encode(into:)` appends (4 to 17).
    public var encodedCount: Int {
        2 + ULEB128.encodedCount(messageID) + ULEB128.encodedCount(length)
            + (correlationID.map(ULEB128.encodedCount) ?? 0)
    }

    /// Appends the version/kind byte, flags, message id, length and correlation id.
    public func encode(into out: inout [UInt8]) {
        out.append(Self.dataKindByte)
        out.append(flags.rawValue)
        out.appendULEB128(messageID)
        out.appendULEB128(length)
        if let correlationID { out.appendULEB128(correlationID) }
    }
}
