import Simulator
import PropertyBased
import Testing
@testable import Transport

@Suite("Simulation properties")
struct SimulationPropertyTests {
    @Test func fragmentsCoverTheFrameAndFillTheLinkLayerPayload() async {
        await propertyCheck(input: Gen.int(in: 27...251), Gen.int(in: 23...517)) { payload, mtu in
            let model = AirTimeModel(configuration: BLELinkConfiguration(linkLayerPayload: payload, attMTU: mtu))
            let fragments = model.fragments(ofPacketSize: mtu - 3)
            #expect(fragments.reduce(0, +) == mtu - 3 + 7)
            #expect(fragments.allSatisfy { $0 > 0 && $0 <= payload })
            #expect(fragments.dropLast().allSatisfy { $0 == payload })
        }
    }

    @Test func limitNeverBeatsBackToBackExchanges() async {
        await propertyCheck(
            input: Gen.bool, Gen.int(in: 27...251), Gen.int(in: 23...517), Gen.int(in: 7_500...400_000),
            Gen.int(in: 0...12), Gen.bool
        ) { twoMegabit, payload, mtu, intervalMicroseconds, cap, encrypted in
            let configuration = BLELinkConfiguration(
                phy: twoMegabit ? .le2M : .le1M, linkLayerPayload: payload, attMTU: mtu,
                connectionInterval: .microseconds(intervalMicroseconds), packetsPerEvent: cap == 0 ? nil : cap,
                encrypted: encrypted)
            let model = AirTimeModel(configuration: configuration)
            let exchanges = model.fragments(ofPacketSize: mtu - 3).map {
                model.pairNanoseconds(centralPayload: $0, peripheralPayload: 0) + AirTimeModel.interFrameSpaceNanoseconds
            }
            let bound = Double((mtu - 3) * 8) / (Double(exchanges.reduce(0, +)) / 1e9)
            let limit = model.applicationThroughputLimit
            #expect(limit > 0)
            #expect(limit <= bound * (1 + 1e-9))
        }
    }

    @Test func faultFreeLinksDeliverEveryMessageOnceWhateverTheConfiguration() async {
        await propertyCheck(
            count: 40,
            input: Gen.bool, Gen.int(in: 27...251), Gen.int(in: 23...517), Gen.int(in: 7_500...60_000),
            Gen.int(in: 0...8), Gen.int(in: 4...3_000)
        ) { twoMegabit, payload, mtu, intervalMicroseconds, cap, size in
            let link = BLELinkConfiguration(
                phy: twoMegabit ? .le2M : .le1M, linkLayerPayload: payload, attMTU: mtu,
                connectionInterval: .microseconds(intervalMicroseconds), packetsPerEvent: cap == 0 ? nil : cap)
            let scenario = TransferScenario(link: link, seed: UInt64(size), messageSize: size, messageCount: 5)
            let report = try SimulatedTransfer.run(
                scenario, sender: NaiveTestMessageEndpoint(), receiver: NaiveTestMessageEndpoint())
            #expect(report.isExactlyOnceInOrder)
            // Short transfers may end just before an idle stretch, so only the long-run goodput is bounded by the limit.
            #expect(report.efficiency > 0)
        }
    }
}
