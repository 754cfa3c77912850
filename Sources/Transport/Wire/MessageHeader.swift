/// The message header of a Start packet (PROTOCOL.md 1.2), as Transport writes and reads it.
struct MessageHeader: Equatable, Sendable {
    static let versionKindData: UInt8 = 0x10
    static let versionKindControl: UInt8 = 0x11

    var flags: MessageFlags
    var messageID: UInt32
    var length: UInt32
    var correlationID: UInt32?

    var encodedSize: Int {
        2 + uleb128Size(messageID) + uleb128Size(length) + (correlationID.map(uleb128Size) ?? 0)
    }

    func encode(into out: inout [UInt8]) {
        out.append(Self.versionKindData)
        out.append(flags.rawValue)
        out.appendULEB128(messageID)
        out.appendULEB128(length)
        if let correlationID { out.appendULEB128(correlationID) }
    }

    /// Reads a data message header; nil when malformed, of another version/kind, or with unknown flags.
    init?(reading reader: inout ByteReader) {
        guard reader.readByte() == Self.versionKindData, let raw = reader.readByte() else { return nil }
        let flags = MessageFlags(rawValue: raw)
        guard flags.isSubset(of: .known), let id = reader.readULEB128(), let length = reader.readULEB128() else {
            return nil
        }
        var correlation: UInt32?
        if flags.contains(.response) {
            guard let value = reader.readULEB128() else { return nil }
            correlation = value
        }
        self.init(flags: flags, messageID: id, length: length, correlationID: correlation)
    }

    init(flags: MessageFlags, messageID: UInt32, length: UInt32, correlationID: UInt32?) {
        self.flags = flags
        self.messageID = messageID
        self.length = length
        self.correlationID = correlationID
    }
}

/// Message header flags (PROTOCOL.md 1.2 and 3.3).
public struct MessageFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The body is zlib-deflated.
    public static let deflate = MessageFlags(rawValue: 1 << 0)
    /// The body is encrypted (not used by Transport itself).
    public static let sealed = MessageFlags(rawValue: 1 << 1)
    /// The sender expects acknowledgements (always set by Transport).
    public static let reliable = MessageFlags(rawValue: 1 << 2)
    /// The message is a request that expects a response.
    public static let request = MessageFlags(rawValue: 1 << 3)
    /// The message answers a request; the header carries a correlation id.
    public static let response = MessageFlags(rawValue: 1 << 4)
    /// Every packet of the message carries a 2-byte check (PROTOCOL.md 3.3).
    public static let checked = MessageFlags(rawValue: 1 << 5)

    static let known: MessageFlags = [.deflate, .sealed, .reliable, .request, .response, .checked]
}
