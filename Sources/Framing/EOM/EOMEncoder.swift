/// Encodes one message in the eom format (PROTOCOL 4.2): raw chunks as large as fit, then a value that is
/// exactly `EOM`. A chunk that would equal `EOM` is sent as `EO` and the `M` starts the next chunk.
public struct EOMEncoder<Payload: PayloadBytes>: FrameEncoder where Payload.Index == Int {
    /// The end-of-message marker value.
    public static var marker: [UInt8] { EOMDecoder.marker }
    /// The smallest packet size: the marker must fit.
    public static var minimumPacketSize: Int { marker.count }

    /// The message body, read in place.
    public let payload: Payload
    /// The largest value written.
    public let packetSize: Int
    private var position = 0
    private var markerSent = false

    /// An encoder for `payload`; throws when `packetSize` is below ``minimumPacketSize``.
    public init(payload: Payload, packetSize: Int) throws(FramingError) {
        guard packetSize >= Self.minimumPacketSize else {
            throw .packetSizeTooSmall(format: "eom", packetSize: packetSize, minimum: Self.minimumPacketSize)
        }
        self.payload = payload
        self.packetSize = packetSize
    }

    public mutating func writeNextPacket(into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        let count = payload.count
        if position < count {
            var end = min(count, position + packetSize)
            if end - position == Self.marker.count, isMarker(at: position) { end -= 1 }
            payload.appendBytes(at: position..<end, to: &out)
            position = end
            return true
        }
        guard !markerSent else { return false }
        out.append(contentsOf: Self.marker)
        markerSent = true
        return true
    }

    private func isMarker(at offset: Int) -> Bool {
        let base = payload.startIndex + offset
        return Self.marker.indices.allSatisfy { payload[base + $0] == Self.marker[$0] }
    }
}
