/// A message's stream (body and CRC-32 trailer) reassembled out of order, segment by segment (PROTOCOL 3.2):
/// one buffer of the announced length, written in place; a segment received in pieces is held when its first
/// and its last bytes meet.
public struct SegmentedStream: Sendable {
    /// The cut that names the segments.
    public let cut: MsgPipeCut
    /// The stream bytes: those of held segments (and pieces) are filled in.
    public private(set) var bytes: [UInt8]
    /// The segments held whole.
    public private(set) var held: SegmentSet
    /// The highest segment index of which any byte arrived.
    public private(set) var highest = 0
    /// Byte coverage of segments received in pieces: bytes `0 ..< low` and `high ..< count` are present.
    private var partial: [Int: (low: Int, high: Int)] = [:]

    /// An empty stream of `cut.streamCount` bytes.
    public init(cut: MsgPipeCut) {
        self.cut = cut
        bytes = [UInt8](repeating: 0, count: cut.streamCount)
        held = SegmentSet(capacity: cut.count)
    }

    /// Segments of which only pieces arrived.
    public var partialSegments: Int { partial.count }

    /// True when every segment is held.
    public var isComplete: Bool { held.isFull }

    /// Stores a whole segment; returns false when it was held already or `data` is not its length.
    @discardableResult
    public mutating func store(segment: Int, data: ArraySlice<UInt8>) -> Bool {
        guard segment >= 0, segment < cut.count else { return false }
        let range = cut.range(of: segment)
        guard data.count == range.count, !held.contains(segment) else { return false }
        copy(data, to: range.lowerBound)
        held.insert(segment)
        partial[segment] = nil
        highest = max(highest, segment)
        return true
    }

    /// Stores stream bytes from `offset` on (an explicit-offset packet's data), which may run over several
    /// segments; returns false when they do not lie within the stream.
    @discardableResult
    public mutating func store(fromStreamOffset offset: Int, data: ArraySlice<UInt8>) -> Bool {
        guard offset >= 0, offset + data.count <= cut.streamCount else { return false }
        var position = offset
        while position < offset + data.count {
            let segment = cut.segment(containing: position)
            let range = cut.range(of: segment)
            let end = min(range.upperBound, offset + data.count)
            let start = data.startIndex + (position - offset)
            store(segment: segment, offset: position - range.lowerBound, data: data[start..<start + (end - position)])
            position = end
        }
        return true
    }

    /// Stores a piece of segment `segment` at `offset` within it (the caller checked the bounds).
    private mutating func store(segment: Int, offset: Int, data: ArraySlice<UInt8>) {
        let range = cut.range(of: segment)
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
            copy(data, to: start)
            coverage.low = end
        }
        if end >= coverage.high && offset < coverage.high {
            copy(data, to: start)
            coverage.high = offset
        }
        if coverage.low >= coverage.high {
            held.insert(segment)
            partial[segment] = nil
        } else {
            partial[segment] = coverage
        }
    }

    /// Copies `data` into the stream at `offset`, in place.
    private mutating func copy(_ data: ArraySlice<UInt8>, to offset: Int) {
        guard !data.isEmpty else { return }
        bytes.withUnsafeMutableBytes { stream in
            data.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: stream[offset..<offset + source.count]).copyMemory(from: source)
            }
        }
    }

    /// The body when the stream is complete and its CRC-32 trailer matches; nil otherwise. Consumes the
    /// stream's buffer (no copy).
    public consuming func verifiedBody() -> [UInt8]? {
        let length = cut.streamCount - 4
        guard isComplete, length >= 0 else { return nil }
        let trailer = UInt32(bytes[length]) | UInt32(bytes[length + 1]) << 8 | UInt32(bytes[length + 2]) << 16
            | UInt32(bytes[length + 3]) << 24
        guard CRC32.checksum(bytes[..<length]) == trailer else { return nil }
        var body = bytes
        bytes = []
        body.removeLast(4)
        return body
    }
}
