import Simulator
import Testing
@testable import Transport

/// Several links sharing one controller's air (``SharedAir``): each gets a slot of interval / N.
@Suite("Simulated links sharing the air")
struct SimulationSharedAirTests {
    static let fast = BLELinkConfiguration(
        phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))

    private func run(_ link: BLELinkConfiguration, links: Int, seed: UInt64 = 3) throws -> [TransferReport] {
        let scenario = TransferScenario(link: link, seed: seed, messageSize: 32_768, messageCount: 2)
        return try SharedAir.run(scenario, linkCount: links) { (TransportEndpoint(), TransportEndpoint()) }
    }

    @Test("two links: aggregate goodput not above one link's limit, each link about half of one alone",
          arguments: [fast, BLELinkConfiguration()])
    func twoLinksShare(link: BLELinkConfiguration) throws {
        let limit = AirTimeModel(configuration: link).applicationThroughputLimit / 1000
        let alone = try #require(try run(link, links: 1).first)
        let pair = try run(link, links: 2)
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

    @Test("the same seed gives the same reports, another seed other message contents")
    func deterministic() throws {
        let first = try run(Self.fast, links: 3, seed: 11)
        let second = try run(Self.fast, links: 3, seed: 11)
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
}
