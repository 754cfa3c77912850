import Transport
/// xoshiro256** (Blackman, Vigna 2018): the seeded generator behind every fault decision, so that a failure
/// replays from its seed. Its helpers below do not depend on the standard library's sampling algorithms,
/// which may change between Swift versions.
public struct Xoshiro256StarStar: RandomNumberGenerator, Sendable {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64

    /// A generator whose sequence is fully determined by `seed` (expanded with ``SplitMix64``).
    public init(seed: UInt64) {
        var seeder = SplitMix64(seed: seed)
        s0 = seeder.next()
        s1 = seeder.next()
        s2 = seeder.next()
        s3 = seeder.next()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, by: 7) &* 9
        let shifted = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= shifted
        s3 = rotateLeft(s3, by: 45)
        return result
    }

    /// A uniform value in [0, 1) with 53 random bits.
    public mutating func nextUnitInterval() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `probability` (0 never, 1 always).
    public mutating func chance(_ probability: Double) -> Bool {
        nextUnitInterval() < probability
    }

    /// A uniform integer in `0..<bound` (0 when `bound` is not positive), by Lemire's multiply-and-reject.
    public mutating func next(below bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        let range = UInt64(bound)
        let threshold = (0 &- range) % range
        while true {
            let product = next().multipliedFullWidth(by: range)
            if product.low >= threshold { return Int(product.high) }
        }
    }

    private func rotateLeft(_ value: UInt64, by count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
