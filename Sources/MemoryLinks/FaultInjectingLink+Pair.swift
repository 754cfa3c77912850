import Transport
extension FaultInjectingLink where Base == MemoryLink {
    /// An in-memory pair with faults injected in both directions (each direction seeded from `seed`) and the
    /// pair's own connection used for the disconnect faults.
    public static func pair(
        maximumPacketSize: Int = 244, capacity: Int = 32, faults: LinkFaults, seed: UInt64
    ) -> (FaultInjectingLink<MemoryLink>, FaultInjectingLink<MemoryLink>) {
        let (first, second) = MemoryLink.pair(maximumPacketSize: maximumPacketSize, capacity: capacity)
        return (
            FaultInjectingLink(base: first, faults: faults, seed: seed, control: first),
            FaultInjectingLink(base: second, faults: faults, seed: seed ^ 0x5EED_0F_B1E, control: second)
        )
    }
}
