/// How a message's stream (body + CRC-32) is cut into segments, one per packet index (PROTOCOL.md 3.2).
///
/// Fixed per message by the packet size `P0` of its Start packet: segment 0 is the stream bytes of the Start
/// packet, every later segment the bytes of one full implicitly indexed packet.
struct SegmentLayout: Equatable, Sendable {
    /// The smallest packet size Transport works with (ATT_MTU 23).
    static let minimumPacketSize = 20
    /// Bytes of the per-packet check (PROTOCOL.md 3.3).
    static let checkSize = 2

    let streamLength: Int
    let packetSize: Int
    let firstCapacity: Int
    let capacity: Int
    let count: Int

    /// Nil when `packetSize` cannot carry the Start packet's header and check.
    init?(streamLength: Int, packetSize: Int, headerSize: Int, checked: Bool) {
        let firstCapacity = packetSize - 1 - headerSize - Self.checkSize
        let capacity = packetSize - 1 - (checked ? Self.checkSize : 0)
        guard firstCapacity >= 0, capacity >= 1, streamLength >= 0 else { return nil }
        self.streamLength = streamLength
        self.packetSize = packetSize
        self.firstCapacity = firstCapacity
        self.capacity = capacity
        if streamLength <= firstCapacity {
            count = 1
        } else {
            count = 1 + (streamLength - firstCapacity + capacity - 1) / capacity
        }
    }

    /// The segment holding stream byte `offset` (0 ..< streamLength).
    func segment(containing offset: Int) -> Int {
        offset < firstCapacity ? 0 : 1 + (offset - firstCapacity) / capacity
    }

    /// The stream bytes of segment `index` (0 ..< count).
    func range(of index: Int) -> Range<Int> {
        if index == 0 { return 0 ..< min(firstCapacity, streamLength) }
        let start = firstCapacity + (index - 1) * capacity
        return start ..< min(start + capacity, streamLength)
    }
}
