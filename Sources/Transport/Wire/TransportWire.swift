public import Framing

extension MessageFlags {
    /// Transport's flag bit 5: every packet of the message carries a 2-byte check (PROTOCOL.md 3.3).
    ///
    /// Framing version 1 still lists bit 5 as reserved; ``decodeTransportStart(_:)`` reads Start packets that
    /// set it. (To move into Framing's `MessageFlags` when the lead merges.)
    public static let checked = MessageFlags(rawValue: 1 << 5)
}

extension MessageHeader {
    /// Decodes a data message header that may set Transport's ``MessageFlags/checked`` bit; nil when malformed.
    static func decodeTransport(_ reader: inout ByteReader) -> MessageHeader? {
        let bytes = reader.remaining
        guard bytes.count >= 2 else { return nil }
        let flags = MessageFlags(rawValue: bytes[bytes.startIndex + 1])
        guard flags.contains(.checked) else { return try? MessageHeader(decoding: &reader) }
        var masked = Array(bytes)
        masked[1] &= ~MessageFlags.checked.rawValue
        var maskedReader = ByteReader(masked[...])
        guard var header = try? MessageHeader(decoding: &maskedReader) else { return nil }
        reader = ByteReader(bytes.suffix(maskedReader.remaining.count))
        header = MessageHeader(
            messageID: header.messageID, length: header.length, flags: header.flags.union(.checked),
            correlationID: header.correlationID)
        return header
    }
}
