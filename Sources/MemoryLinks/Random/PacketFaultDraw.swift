import Transport
/// One packet's fault decisions, drawn together: every packet consumes the same random values whatever
/// happens to it, so one fault never shifts the decisions for the packets after it.
package struct PacketFaultDraw {
    /// Uniform values in [0, 1), compared with each fault's probability.
    package let loss: Double, duplicate: Double, reorder: Double, corrupt: Double, delay: Double
    /// How many later packets a delayed packet waits for, 1...maximumDelay.
    package let delayPackets: Int
    private let position: Int
    private let bit: UInt8

    package init(packetSize: Int, maximumDelay: Int, using random: inout Xoshiro256StarStar) {
        loss = random.nextUnitInterval()
        duplicate = random.nextUnitInterval()
        reorder = random.nextUnitInterval()
        corrupt = random.nextUnitInterval()
        delay = random.nextUnitInterval()
        position = random.next(below: max(1, packetSize))
        bit = UInt8(1) << UInt8(random.next(below: 8))
        delayPackets = 1 + random.next(below: max(1, maximumDelay))
    }

    /// `packet` with the drawn bit of the drawn byte flipped (an empty packet stays empty).
    package func corrupting(_ packet: [UInt8]) -> [UInt8] {
        guard position < packet.count else { return packet }
        var corrupted = packet
        corrupted[position] ^= bit
        return corrupted
    }
}
