/// One decoded msgpipe packet: a view into the received bytes, nothing copied.
public enum MsgPipePacket: Equatable, Sendable {
    /// A Start packet: the first packet of a data message, with the first stream bytes.
    case start(PacketHeader, MessageHeader, data: ArraySlice<UInt8>)
    /// A following packet of a data message, with its stream bytes.
    case continuation(PacketHeader, data: ArraySlice<UInt8>)
    /// A control packet.
    case control(ControlPacket)

    /// Decodes `packet`, checking every field against the bytes present.
    public init(decoding packet: ArraySlice<UInt8>) throws(FramingError) {
        var reader = ByteReader(packet)
        let header = try PacketHeader(decoding: &reader)
        guard header.isStart else {
            self = .continuation(header, data: reader.readRemaining())
            return
        }
        // Peek at the version/kind byte to tell control packets from data Start packets.
        guard let versionKind = reader.remaining.first else { throw .truncatedPacket(field: "version/kind byte") }
        if versionKind >> 4 == MessageHeader.version, versionKind & 0x0F == 1 {
            guard header.isEnd, header.channel == 0, header.sequence == 0 else {
                throw .malformedControlPacket(reason: "header byte must be 0xc0")
            }
            _ = try reader.readByte("version/kind byte")
            self = .control(ControlPacket(payload: reader.readRemaining()))
            return
        }
        let message = try MessageHeader(decoding: &reader)
        self = .start(header, message, data: reader.readRemaining())
    }
}
