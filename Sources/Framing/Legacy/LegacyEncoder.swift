/// Encodes one message in the legacy format (PROTOCOL 4.1): `Start` + first chunk, middle chunks, `End` + last
/// chunk, every value filled as far as it goes.
///
/// A middle chunk never begins with `Start` or `End` (the decoder would take it for a marker): when a full
/// chunk would end just before such bytes, it ends one byte earlier. Two positions in a row can never both
/// begin a marker, so one byte always suffices and any payload round-trips.
public struct LegacyEncoder<Payload: PayloadBytes>: FrameEncoder where Payload.Index == Int {
    /// The smallest packet size: `Start` plus one data byte, so the first chunk can always shrink by one.
    public static var minimumPacketSize: Int { LegacyMarkers.start.count + 1 }

    /// The message body, read in place.
    public let payload: Payload
    /// The largest value written.
    public let packetSize: Int
    private var position = 0
    private var phase = Phase.start

    private enum Phase { case start, body, done }

    /// An encoder for `payload`; throws when `packetSize` is below ``minimumPacketSize``.
    public init(payload: Payload, packetSize: Int) throws(FramingError) {
        guard packetSize >= Self.minimumPacketSize else {
            throw .packetSizeTooSmall(format: "legacy", packetSize: packetSize, minimum: Self.minimumPacketSize)
        }
        self.payload = payload
        self.packetSize = packetSize
    }

    public mutating func writeNextPacket(into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        let count = payload.count
        switch phase {
        case .start:
            out.append(contentsOf: LegacyMarkers.start)
            let end = chunkEnd(from: 0, capacity: packetSize - LegacyMarkers.start.count)
            payload.appendBytes(at: 0..<end, to: &out)
            position = end
            phase = .body
        case .body where count - position <= packetSize - LegacyMarkers.end.count:
            out.append(contentsOf: LegacyMarkers.end)
            payload.appendBytes(at: position..<count, to: &out)
            position = count
            phase = .done
        case .body:
            let end = chunkEnd(from: position, capacity: packetSize)
            payload.appendBytes(at: position..<end, to: &out)
            position = end
        case .done:
            return false
        }
        return true
    }

    /// Where a chunk starting at `start` ends: as far as `capacity` goes, one byte less when a middle chunk
    /// would otherwise begin with a marker.
    private func chunkEnd(from start: Int, capacity: Int) -> Int {
        let count = payload.count
        let end = min(count, start + capacity)
        let nextIsMiddle = count - end > packetSize - LegacyMarkers.end.count
        return nextIsMiddle && beginsWithMarker(at: end) ? end - 1 : end
    }

    private func beginsWithMarker(at offset: Int) -> Bool {
        begins(with: LegacyMarkers.start, at: offset) || begins(with: LegacyMarkers.end, at: offset)
    }

    private func begins(with marker: [UInt8], at offset: Int) -> Bool {
        guard payload.count - offset >= marker.count else { return false }
        let base = payload.startIndex + offset
        return marker.indices.allSatisfy { payload[base + $0] == marker[$0] }
    }
}
