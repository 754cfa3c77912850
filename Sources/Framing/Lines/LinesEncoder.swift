/// Encodes one message in the lines format (PROTOCOL 4.3): the payload and a `\n`, cut into values as large
/// as fit. A payload containing `\n` cannot be carried and is refused.
public struct LinesEncoder<Payload: PayloadBytes>: FrameEncoder where Payload.Index == Int {
    /// The line terminator.
    public static var newline: UInt8 { LinesDecoder.newline }
    /// The smallest packet size.
    public static var minimumPacketSize: Int { 1 }

    /// The message body, read in place.
    public let payload: Payload
    /// The largest value written.
    public let packetSize: Int
    private var position = 0

    /// An encoder for `payload`; throws when it contains `\n` or `packetSize` is below 1.
    public init(payload: Payload, packetSize: Int) throws(FramingError) {
        guard packetSize >= Self.minimumPacketSize else {
            throw .packetSizeTooSmall(format: "lines", packetSize: packetSize, minimum: Self.minimumPacketSize)
        }
        if let index = payload.firstIndex(of: Self.newline) {
            throw .payloadContainsNewline(offset: index - payload.startIndex)
        }
        self.payload = payload
        self.packetSize = packetSize
    }

    public mutating func writeNextPacket(into out: inout [UInt8]) -> Bool {
        let streamCount = payload.count + 1
        guard position < streamCount else { return false }
        out.removeAll(keepingCapacity: true)
        let end = min(streamCount, position + packetSize)
        payload.appendBytes(at: position..<min(end, payload.count), to: &out)
        if end == streamCount { out.append(Self.newline) }
        position = end
        return true
    }
}
