import BLELink
import Simulator
import Testing
@testable import Transport

/// Several links sharing one controller's air (``SharedAir``): each gets a slot of interval / N.
@Suite("Simulated links sharing the air")
struct SimulationSharedAirTests {
    static let fast = BLELinkConfiguration(
        phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))

    private func run(_ link: BLELinkConfiguration, links: Int, seed: UInt64 = 3) async throws -> [TransferReport] {
        try await Self.share(TransferScenario(link: link, seed: seed, messageSize: 32_768, messageCount: 2), links: links)
    }

    /// On a thread of its own (``BlockingCall``): seven links' transfers compute for seconds without suspending,
    /// which would hold one of the cooperative threads every test of the process shares.
    static func share(_ scenario: TransferScenario, links: Int) async throws -> [TransferReport] {
        try await BlockingCall.run {
            try SharedAir.run(scenario, linkCount: links) { (TransportEndpoint(), TransportEndpoint()) }
        }
    }

    @Test("two links: aggregate goodput not above one link's limit, each link about half of one alone",
          arguments: [fast, BLELinkConfiguration()])
    func twoLinksShare(link: BLELinkConfiguration) async throws {
        let limit = AirTimeModel(configuration: link).applicationThroughputLimit / 1000
        let alone = try #require(try await run(link, links: 1).first)
        let pair = try await run(link, links: 2)
        #expect(pair.count == 2)
        #expect(pair.allSatisfy { $0.isExactlyOnceInOrder })
        let total = TransferReport.aggregate(pair, limitKbps: limit)
        #expect(total.payloadBytes == 2 * 2 * 32_768)
        #expect(total.goodputKbps <= limit, "aggregate \(total.goodputKbps) over the limit \(limit)")
        #expect(total.goodputKbps > 0.6 * alone.goodputKbps, "sharing lost most of the air: \(total.goodputKbps)")
        for report in pair {
            let ratio = report.goodputKbps / alone.goodputKbps
            #expect(ratio > 0.35 && ratio < 0.6, "per-link share \(ratio)")
        }
    }

    /// One central's radio serving N peripherals on the BLE 4.0 baseline (1M, LL 27, MTU 23), 128 KiB per
    /// link: the aggregate against the limit of one link owning the air, and the links' fairness. The aim is
    /// 0.9 of that limit and every link within 10% of the mean. Fairness holds everywhere (the model gives
    /// every link the same slot). The aggregate reaches 0.9 at 15 and 30 ms for 1 and 3 links and at 30 ms for
    /// 7; the floors below are what the model gives where it does not, and why:
    /// - 1 link, 7.5 ms (0.86): the receiver's acknowledgements ride in PDU exchanges the limit assumes empty,
    ///   and a 7.5 ms event holds only 11 exchanges, so each one costs more.
    /// - 3 and 7 links, 7.5 ms (0.78, 0.60): each slot keeps its own end margin and fits whole exchanges only
    ///   (3 of 11 per 2.5 ms slot, 1 per 1.07 ms slot); against the slots' own limit the Transport reaches 0.95.
    /// - 7 links, 15 ms (0.60): a 2.1 ms slot fits 3 empty-answer exchanges but only 2 when one answer carries
    ///   an acknowledgement, which happens in most events (0.63 of the slots' own limit).
    @Test("N peripherals on one central: the aggregate against the air's limit, every link within 10% of the mean",
          arguments: [
            (1, 7_500, 0.85), (1, 15_000, 0.9), (1, 30_000, 0.9),
            (3, 7_500, 0.77), (3, 15_000, 0.9), (3, 30_000, 0.9),
            (7, 7_500, 0.6), (7, 15_000, 0.6), (7, 30_000, 0.9),
          ] as [(Int, Int64, Double)])
    func peripheralsShareTheCentralsAir(links: Int, intervalMicroseconds: Int64, floor: Double) async throws {
        let link = BLELinkConfiguration(connectionInterval: .microseconds(intervalMicroseconds))
        let scenario = TransferScenario(link: link, seed: 1, messageSize: 131_072, messageCount: 1)
        let reports = try await Self.share(scenario, links: links)
        #expect(reports.count == links)
        #expect(reports.allSatisfy { $0.isExactlyOnceInOrder })
        let airLimit = AirTimeModel(configuration: link).applicationThroughputLimit / 1000
        let slotsLimit = reports.reduce(0) { $0 + $1.limitKbps }
        let total = TransferReport.aggregate(reports, limitKbps: airLimit)
        #expect(slotsLimit <= airLimit * 1.000_001)
        #expect(total.goodputKbps <= slotsLimit)
        #expect(total.efficiency >= floor, "aggregate \(total.goodputKbps) of \(airLimit) kbps (slots: \(slotsLimit))")
        let fairness = LinkFairness(reports)
        #expect(fairness.largestDeviationPercent <= 10, "\(reports.map(\.goodputKbps))")
        #expect(fairness.jainIndex >= 0.99)
    }

    /// Each link keeps the event-end margin in its own slot and fits only whole PDU exchanges into it, so the
    /// slotted air carries less than one link owning it: exactly as much at 30 ms for 3 or 7 links as the
    /// numbers of exchanges say (42 of 44 per interval), and at 7.5 ms for 7 links one exchange per slot
    /// (7 of 11).
    @Test("the shared limit is what whole exchanges in each slot carry, below one link owning the air")
    func sharedAirCostsWhatTheSlotsLose() throws {
        func ratio(_ interval: Int64, _ links: Int) throws -> Double {
            let link = BLELinkConfiguration(connectionInterval: .microseconds(interval))
            let slot = AirTimeModel(configuration: try SharedAir.configuration(link, linkCount: links))
            return Double(links) * slot.applicationThroughputLimit / AirTimeModel(configuration: link).applicationThroughputLimit
        }
        #expect(abs(try ratio(30_000, 3) - 42.0 / 44) < 1e-9)
        #expect(abs(try ratio(30_000, 7) - 42.0 / 44) < 1e-9)
        #expect(abs(try ratio(7_500, 7) - 7.0 / 11) < 1e-9)
        #expect(abs(try ratio(7_500, 1) - 1) < 1e-9)
    }

    @Test("Jain's index and the largest deviation from the mean")
    func fairness() {
        #expect(LinkFairness(goodputs: [5, 5, 5]) == LinkFairness(goodputs: [1]))
        #expect(LinkFairness(goodputs: [5, 5, 5]).jainIndex == 1)
        #expect(LinkFairness(goodputs: [5, 5, 5]).largestDeviationPercent == 0)
        #expect(LinkFairness(goodputs: [1, 0]).jainIndex == 0.5)
        #expect(LinkFairness(goodputs: [1, 0]).largestDeviationPercent == 100)
        #expect(abs(LinkFairness(goodputs: [90, 100, 110]).largestDeviationPercent - 10) < 1e-9)
        #expect(LinkFairness(goodputs: []).jainIndex == 0)
        #expect(LinkFairness(goodputs: [0, 0]).largestDeviationPercent == 0)
    }

    @Test("the same seed gives the same reports, another seed other message contents")
    func deterministic() async throws {
        let first = try await run(Self.fast, links: 3, seed: 11)
        let second = try await run(Self.fast, links: 3, seed: 11)
        #expect(first == second)
        #expect(first.count == 3)
    }

    @Test("one link's shared configuration is the configuration itself")
    func oneLinkUnchanged() throws {
        #expect(try SharedAir.configuration(Self.fast, linkCount: 1) == Self.fast)
    }

    @Test("more links than fit a PDU exchange into their slot, or none, are refused")
    func refused() {
        #expect(throws: SimulationError.self) { try SharedAir.configuration(Self.fast, linkCount: 0) }
        let slowPhy = BLELinkConfiguration(linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))
        #expect(throws: SimulationError.self) { try SharedAir.configuration(slowPhy, linkCount: 4) }
    }

    @Test("the shared report judges each link against its slot, all of them against one link's air and the slots'")
    func sharedReportJudgesLinksAndAll() async throws {
        let scenario = TransferScenario(link: Self.fast, seed: 3, messageSize: 8_192, messageCount: 2)
        let shared = try await BlockingCall.run {
            try SharedAir.report(scenario, linkCount: 3) { (TransportEndpoint(), TransportEndpoint()) }
        }
        let slot = AirTimeModel(configuration: try SharedAir.configuration(Self.fast, linkCount: 3)).limitKbps
        #expect(shared.links.count == 3)
        #expect(shared.links.allSatisfy { abs($0.limitKbps - slot) < 1e-6 })
        #expect(shared.total.limitKbps == AirTimeModel(configuration: Self.fast).limitKbps)
        #expect(shared.total.payloadBytes == 3 * 2 * 8_192)
        #expect(abs(shared.sharedLimitKbps - 3 * slot) < 1e-6)
        #expect(shared.sharedLimitKbps <= shared.total.limitKbps + 1e-6, "slots cannot add air")
        #expect(abs(shared.sharedEfficiency - shared.total.goodputKbps / shared.sharedLimitKbps) < 1e-12)
        #expect(shared.fairness == LinkFairness(shared.links))
        #expect(shared.isExactlyOnceInOrder)
    }
}
