/// The header byte every msgpipe packet begins with (PROTOCOL 1.1), plus the explicit stream offset when X is set.
public struct PacketHeader: Equatable, Sendable {
    /// S: the first packet of a message; a message header follows.
    public var isStart: Bool
    /// E: the packet whose data ends the message's stream.
    public var isEnd: Bool
    /// C: the channel (0-3) of the message this packet belongs to.
    public var channel: UInt8
    /// Q: the sender's packet sequence number within the message, modulo 8 (the Start packet is 0).
    public var sequence: UInt8
    /// X: the stream offset of the packet's first data byte, sent explicitly (retransmission and resume).
    public var explicitOffset: UInt32?

    static let startBit: UInt8 = 0x80
    static let endBit: UInt8 = 0x40
    static let explicitBit: UInt8 = 0x20

    /// A header; `channel` is taken modulo 4 and `sequence` modulo 8.
    public init(isStart: Bool, isEnd: Bool, channel: UInt8, sequence: Int, explicitOffset: UInt32? = nil) {
        self.isStart = isStart
        self.isEnd = isEnd
        self.channel = channel & 0x03
        self.sequence = UInt8(truncatingIfNeeded: sequence) & 0x07
        self.explicitOffset = explicitOffset
    }

    /// The header a lone header byte describes (its explicit offset, if X is set, is not read).
    init(byte: UInt8) {
        isStart = byte & Self.startBit != 0
        isEnd = byte & Self.endBit != 0
        channel = (byte >> 3) & 0x03
        sequence = byte & 0x07
        explicitOffset = nil
    }

    /// Decodes the header byte and, with X set, the explicit offset.
    public init(decoding reader: inout ByteReader) throws(FramingError) {
        guard !reader.isAtEnd else { throw .emptyPacket }
        let byte = try reader.readByte("header byte")
        self.init(byte: byte)
        if byte & Self.explicitBit != 0 {
            if isStart { throw .explicitOffsetOnStartPacket }
            explicitOffset = try reader.readULEB128("explicit offset")
        }
    }

    /// The header byte alone.
    public var byte: UInt8 {
        (isStart ? Self.startBit : 0) | (isEnd ? Self.endBit : 0) | (explicitOffset != nil ? Self.explicitBit : 0)
            | (channel & 0x03) << 3 | (sequence & 0x07)
    }

    /// Bytes `encode(into:)` appends: 1, plus the explicit offset's ULEB128.
    public var encodedCount: Int { 1 + (explicitOffset.map(ULEB128.encodedCount) ?? 0) }

    /// Appends the header byte and, with X set, the explicit offset.
    public func encode(into out: inout [UInt8]) {
        out.append(byte)
        if let explicitOffset { out.appendULEB128(explicitOffset) }
    }
}
