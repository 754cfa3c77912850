/// A fixed-size set of segment indices, one bit each (what a reassembler holds, what a sender saw acknowledged).
public struct SegmentSet: Sendable, Equatable {
    private var words: [UInt64]
    /// Indices `0 ..< capacity` fit.
    public let capacity: Int
    /// Indices in the set.
    public private(set) var count = 0

    /// An empty set for `0 ..< capacity`.
    public init(capacity: Int) {
        self.capacity = capacity
        words = Array(repeating: 0, count: (capacity + 63) / 64)
    }

    /// True when `index` is in the set.
    public func contains(_ index: Int) -> Bool {
        guard index >= 0, index < capacity else { return false }
        return words[index / 64] & (1 << UInt64(index % 64)) != 0
    }

    /// Inserts `index`; returns true when it was not in the set.
    @discardableResult
    public mutating func insert(_ index: Int) -> Bool {
        guard index >= 0, index < capacity, !contains(index) else { return false }
        words[index / 64] |= 1 << UInt64(index % 64)
        count += 1
        return true
    }

    /// Removes `index`; returns true when it was in the set.
    @discardableResult
    public mutating func remove(_ index: Int) -> Bool {
        guard contains(index) else { return false }
        words[index / 64] &= ~(1 << UInt64(index % 64))
        count -= 1
        return true
    }

    /// True when every index is in the set.
    public var isFull: Bool { count == capacity }

    /// The first index not in the set at or after `start` (capacity when none).
    public func firstMissing(from start: Int = 0) -> Int {
        var index = max(start, 0)
        while index < capacity {
            let word = words[index / 64] >> UInt64(index % 64)
            if word == UInt64.max >> UInt64(index % 64) {
                index = (index / 64 + 1) * 64
                continue
            }
            if word & 1 == 0 { return index }
            index += (~word).trailingZeroBitCount
        }
        return capacity
    }
}
