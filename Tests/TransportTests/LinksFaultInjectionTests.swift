import MemoryLinks
import Testing
@testable import Transport

@Suite("FaultInjectingLink")
struct FaultInjectionTests {
    /// Sends packets 0..<count through a faulty pair and returns what the receiving end got until `stop` packets
    /// or connection events arrived; the sender closes nothing, so the count must be known.
    static func transfer(
        count: Int, faults: LinkFaults, seed: UInt64, expectEvents: Int
    ) async throws -> (events: [LinkEvent], statistics: LinkFaultStatistics) {
        let (a, b) = FaultInjectingLink<MemoryLink>.pair(
            maximumPacketSize: 8, capacity: 4096, faults: faults, seed: seed)
        for index in 0..<count { try await a.send([UInt8(truncatingIfNeeded: index), 0xAA, 0x55]) }
        var events: [LinkEvent] = []
        var iterator = b.events.makeAsyncIterator()
        while events.count < expectEvents, let event = await iterator.next() { events.append(event) }
        return (events, a.statistics)
    }

    static func packets(_ events: [LinkEvent]) -> [[UInt8]] {
        events.compactMap { if case let .packet(bytes) = $0 { bytes } else { nil } }
    }

    @Test func withoutFaultsTheLinkIsTransparent() async throws {
        let result = try await Self.transfer(count: 50, faults: LinkFaults(), seed: 1, expectEvents: 51)
        #expect(Self.packets(result.events) == (0..<50).map { [UInt8($0), 0xAA, 0x55] })
    }

    @Test func theSameSeedReplaysTheSameFaults() async throws {
        let faults = LinkFaults(drop: 0.1, duplicate: 0.1, reorder: 0.1, corrupt: 0.1, delay: 0.1)
        let first = try await Self.transfer(count: 400, faults: faults, seed: 42, expectEvents: 1)
        let expected = first.statistics.packetsForwarded + 1
        let one = try await Self.transfer(count: 400, faults: faults, seed: 42, expectEvents: expected)
        let two = try await Self.transfer(count: 400, faults: faults, seed: 42, expectEvents: expected)
        let other = try await Self.transfer(count: 400, faults: faults, seed: 43, expectEvents: 1)
        #expect(one.events == two.events)
        #expect(one.statistics == two.statistics)
        #expect(other.statistics != one.statistics)
        #expect(one.statistics.dropped > 0 && one.statistics.duplicated > 0 && one.statistics.corrupted > 0)
        #expect(one.statistics.reordered > 0 && one.statistics.delayed > 0)
    }

    @Test func dropEverythingDeliversNothing() async throws {
        let result = try await Self.transfer(count: 20, faults: LinkFaults(drop: 1), seed: 7, expectEvents: 1)
        #expect(result.statistics.dropped == 20)
        #expect(result.statistics.packetsForwarded == 0)
    }

    @Test func duplicateEverythingDeliversEachPacketTwice() async throws {
        let result = try await Self.transfer(count: 10, faults: LinkFaults(duplicate: 1), seed: 7, expectEvents: 21)
        #expect(Self.packets(result.events) == (0..<10).flatMap { [[UInt8($0), 0xAA, 0x55], [UInt8($0), 0xAA, 0x55]] })
    }

    @Test func reorderSwapsAPacketWithItsSuccessor() async throws {
        let faults = LinkFaults(reorder: 0.3)
        let count = 200
        let (a, b) = FaultInjectingLink<MemoryLink>.pair(maximumPacketSize: 8, capacity: 4096, faults: faults, seed: 9)
        for index in 0..<count { try await a.send([UInt8(index)]) }
        let forwarded = a.statistics.packetsForwarded
        var iterator = b.events.makeAsyncIterator()
        var received: [Int] = []
        while received.count < forwarded, let event = await iterator.next() {
            if case let .packet(bytes) = event { received.append(Int(bytes[0])) }
        }
        #expect(received != received.sorted())
        #expect(Set(received).count == received.count)
        // Every packet arrives at most one place late: a held packet goes right after the next one.
        for (position, value) in received.enumerated() { #expect(abs(value - position) <= 1) }
        #expect(count - received.count <= 1)  // at most the last packet is still held
    }

    @Test func corruptFlipsExactlyOneBit() async throws {
        let result = try await Self.transfer(count: 30, faults: LinkFaults(corrupt: 1), seed: 5, expectEvents: 31)
        for (index, packet) in Self.packets(result.events).enumerated() {
            let original: [UInt8] = [UInt8(index), 0xAA, 0x55]
            let flippedBits = zip(packet, original).map { ($0 ^ $1).nonzeroBitCount }.reduce(0, +)
            #expect(flippedBits == 1)
        }
    }

    @Test func disconnectEveryNPacketsDropsAndRestoresTheConnection() async throws {
        let faults = LinkFaults(disconnectEveryPackets: 3)
        let result = try await Self.transfer(count: 6, faults: faults, seed: 1, expectEvents: 11)
        #expect(
            result.events == [
                .connected(maximumPacketSize: 8), .packet([0, 0xAA, 0x55]), .packet([1, 0xAA, 0x55]),
                .packet([2, 0xAA, 0x55]), .disconnected(reason: "fault injection"), .connected(maximumPacketSize: 8),
                .packet([3, 0xAA, 0x55]), .packet([4, 0xAA, 0x55]), .packet([5, 0xAA, 0x55]),
                .disconnected(reason: "fault injection"), .connected(maximumPacketSize: 8),
            ])
        #expect(result.statistics.disconnects == 2)
    }
}

@Suite("Seeded random")
struct SeededRandomTests {
    @Test func splitMix64MatchesTheReferenceSequence() {
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
    }

    @Test func xoshiroIsReproducibleAndBoundedDrawsStayInRange() {
        var one = Xoshiro256StarStar(seed: 99)
        var two = Xoshiro256StarStar(seed: 99)
        for _ in 0..<1_000 { #expect(one.next() == two.next()) }
        var counts = [Int](repeating: 0, count: 7)
        for _ in 0..<7_000 { counts[one.next(below: 7)] += 1 }
        #expect(counts.allSatisfy { $0 > 800 && $0 < 1_200 })
        for _ in 0..<1_000 {
            let unit = one.nextUnitInterval()
            #expect(unit >= 0 && unit < 1)
        }
    }
}
