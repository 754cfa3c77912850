/// The first byte of every msgpipe packet (PROTOCOL.md 1.1): Start, End, eXplicit index, Channel, index mod 8.
///
/// Transport-side view of the header byte; kept bit-compatible with the Framing codec.
struct PacketHeader: Equatable, Sendable {
    var isStart: Bool
    var isEnd: Bool
    var isExplicit: Bool
    var channel: Int
    var indexModulo8: Int

    init(isStart: Bool, isEnd: Bool, isExplicit: Bool, channel: Int, index: Int) {
        self.isStart = isStart
        self.isEnd = isEnd
        self.isExplicit = isExplicit
        self.channel = channel & 0x3
        self.indexModulo8 = index & 0x7
    }

    init(byte: UInt8) {
        isStart = byte & 0x80 != 0
        isEnd = byte & 0x40 != 0
        isExplicit = byte & 0x20 != 0
        channel = Int((byte >> 3) & 0x3)
        indexModulo8 = Int(byte & 0x7)
    }

    var byte: UInt8 {
        (isStart ? 0x80 : 0) | (isEnd ? 0x40 : 0) | (isExplicit ? 0x20 : 0)
            | UInt8(channel << 3) | UInt8(indexModulo8)
    }
}
