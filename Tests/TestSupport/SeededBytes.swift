public import Synchronization

/// `count` bytes from a xorshift generator seeded with `seed`: the same bytes for the same seed, so a failing
/// transfer replays.
public func seededBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    return (0 ..< count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

/// What a drop test's peripheral counted: whether it dropped the link, and the messages it received.
public final class DropCounters: Sendable {
    public let dropped = Atomic<Bool>(false)
    public let received = Atomic<Int>(0)

    public init() {}
}
