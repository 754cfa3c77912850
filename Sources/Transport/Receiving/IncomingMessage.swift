import Framing

/// The receiver's state of one message being reassembled.
struct IncomingMessage: Sendable {
    let header: MessageHeader
    let channel: Int
    let layout: SegmentLayout
    /// Body as carried followed by its CRC-32; filled segment by segment.
    var stream: [UInt8]
    var held: SegmentSet
    /// Byte coverage of segments received in pieces: bytes `0 ..< low` and `high ..< length` are present.
    var partial: [Int: (low: Int, high: Int)] = [:]
    var highest = 0
    var packetsSinceAcknowledgement = 0
    var acknowledgementDueAt: Duration?
    var acknowledgeNow = false
    var reportHighRange = false

    init(header: MessageHeader, channel: Int, layout: SegmentLayout) {
        self.header = header
        self.channel = channel
        self.layout = layout
        stream = [UInt8](repeating: 0, count: layout.streamLength)
        held = SegmentSet(capacity: layout.count)
    }

    var isChecked: Bool { header.flags.contains(.checked) }
    var isComplete: Bool { held.isFull }

    /// Stores a whole segment; returns false if it was held already.
    @discardableResult
    mutating func store(segment: Int, data: ArraySlice<UInt8>) -> Bool {
        let range = layout.range(of: segment)
        guard data.count == range.count, !held.contains(segment) else { return false }
        stream.replaceSubrange(range, with: data)
        held.insert(segment)
        partial[segment] = nil
        highest = max(highest, segment)
        return true
    }

    /// Stores a piece of a segment at `offset`; the caller checked the bounds.
    mutating func store(segment: Int, offset: Int, data: ArraySlice<UInt8>) {
        let range = layout.range(of: segment)
        guard !held.contains(segment) else { return }
        if offset == 0 && data.count == range.count {
            store(segment: segment, data: data)
            return
        }
        highest = max(highest, segment)
        var coverage = partial[segment] ?? (low: 0, high: range.count)
        let end = offset + data.count
        let start = range.lowerBound + offset
        if offset <= coverage.low && end > coverage.low {
            stream.replaceSubrange(start ..< start + data.count, with: data)
            coverage.low = end
        }
        if end >= coverage.high && offset < coverage.high {
            stream.replaceSubrange(start ..< start + data.count, with: data)
            coverage.high = offset
        }
        if coverage.low >= coverage.high {
            held.insert(segment)
            partial[segment] = nil
        } else {
            partial[segment] = coverage
        }
    }

    /// The acknowledgement to send now, its bitmap fitted into `packetSize` (PROTOCOL.md 3.4).
    mutating func acknowledgement(packetSize: Int) -> Acknowledgement {
        let cumulative = held.firstMissing()
        let id = header.messageID
        let gapSize = ULEB128.encodedCount(UInt32(max(highest, 0)))
        let fixed = 2 + 1 + ULEB128.encodedCount(id) + ULEB128.encodedCount(UInt32(cumulative)) + gapSize + 2
        let capacityBits = max(packetSize - fixed, 0) * 8
        var start = cumulative + 1
        if highest - start + 1 > capacityBits {
            if reportHighRange { start = highest + 1 - capacityBits }
            reportHighRange.toggle()
        }
        let bits = max(min(highest - start + 1, capacityBits), 0)
        var bitmap = [UInt8](repeating: 0, count: (bits + 7) / 8)
        for bit in 0 ..< bits where held.contains(start + bit) {
            bitmap[bit / 8] |= 1 << UInt8(bit % 8)
        }
        while bitmap.last == 0 { bitmap.removeLast() }
        packetsSinceAcknowledgement = 0
        acknowledgementDueAt = nil
        acknowledgeNow = false
        return Acknowledgement(
            messageID: id, checked: isChecked, cumulative: UInt32(cumulative), bitmapStart: UInt32(min(start, Int(UInt32.max))),
            bitmap: bitmap)
    }
}
