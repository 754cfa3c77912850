import Framing

/// The receiver's state of one message being reassembled (into Framing's ``SegmentedStream``).
struct IncomingMessage: Sendable {
    let header: MessageHeader
    var channel: Int
    /// The stream, filled segment by segment in place.
    var stream: SegmentedStream
    var packetsSinceAcknowledgement = 0
    var acknowledgementDueAt: Duration?
    var acknowledgeNow = false
    var reportHighRange = false

    init(header: MessageHeader, channel: Int, cut: MsgPipeCut) {
        self.header = header
        self.channel = channel
        stream = SegmentedStream(cut: cut)
    }

    var cut: MsgPipeCut { stream.cut }
    var held: SegmentSet { stream.held }
    var highest: Int { stream.highest }
    var isChecked: Bool { header.flags.contains(.checked) }
    var isComplete: Bool { stream.isComplete }

    /// Writes the acknowledgement to send now into `out` (replacing its contents), its bitmap fitted into
    /// `packetSize` (PROTOCOL.md 3.4): built in the buffer itself, nothing allocated.
    mutating func writeAcknowledgement(into out: inout [UInt8], packetSize: Int) {
        let held = stream.held
        let highest = stream.highest
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
        let bitmapStart = UInt32(min(start, Int(UInt32.max)))
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: ControlPacket.prefix)
        out.append(TransportControl.acknowledgementType(checked: isChecked))
        out.appendULEB128(id)
        out.appendULEB128(UInt32(cumulative))
        out.appendULEB128(bitmapStart &- UInt32(cumulative))
        let bitmap = out.count
        for _ in 0 ..< (bits + 7) / 8 { out.append(0) }
        for bit in 0 ..< bits where held.contains(start + bit) {
            out[bitmap + bit / 8] |= 1 << UInt8(bit % 8)
        }
        while out.count > bitmap, out.last == 0 { out.removeLast() }
        PacketCheck.appendControl(to: &out)
        packetsSinceAcknowledgement = 0
        acknowledgementDueAt = nil
        acknowledgeNow = false
    }
}
