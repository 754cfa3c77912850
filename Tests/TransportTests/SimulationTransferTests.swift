import Simulator
import Testing
@testable import Transport

@Suite("Simulated transfer accounting")
struct SimulationTransferTests {
    @Test func faultFreeNaiveTransferDeliversEveryMessageOnceAtNearTheLimit() throws {
        let scenario = TransferScenario(
            link: BLELinkConfiguration(phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(15)),
            seed: 5, messageSize: 4_096, messageCount: 64)
        let report = try SimulatedTransfer.run(
            scenario, sender: NaiveTestMessageEndpoint(), receiver: NaiveTestMessageEndpoint())
        #expect(report.isExactlyOnceInOrder)
        #expect(report.messagesDelivered == 64)
        #expect(report.payloadBytes == 64 * 4_096)
        #expect(report.efficiency > 0.95 && report.efficiency <= 1.0, "efficiency \(report.efficiency)")
    }

    @Test func lossesDuplicatesAndCorruptionAreCountedNotHidden() throws {
        let scenario = TransferScenario(
            link: BLELinkConfiguration(), faults: SimulatedFaults(loss: 0.02, duplicate: 0.02, corrupt: 0.02), seed: 9,
            messageSize: 16, messageCount: 400)
        let report = try SimulatedTransfer.run(
            scenario, sender: NaiveTestMessageEndpoint(), receiver: NaiveTestMessageEndpoint())
        #expect(report.completed == false)
        #expect(report.messagesSent == 400)
        #expect(report.messagesLost > 0 && report.messagesCorrupted > 0)
        #expect(report.messagesDelivered + report.messagesLost == 400)
    }

    @Test func messagesAreDeterministicPerSeedAndIndex() {
        let scenario = TransferScenario(link: BLELinkConfiguration(), seed: 3, messageSize: 40, messageCount: 2)
        #expect(scenario.message(1) == scenario.message(1))
        #expect(scenario.message(1) != scenario.message(0))
        #expect(Array(scenario.message(1).prefix(4)) == [1, 0, 0, 0])
        #expect(TransferScenario(link: BLELinkConfiguration(), seed: 4, messageSize: 40, messageCount: 2).message(1)
            != scenario.message(1))
    }

    @Test("a message shorter than its 4-byte index carries the index's first bytes (a real link's bench may ask for 1)")
    func messagesBelowFourBytesAreTheIndexCut() {
        let message = { (size: Int) in TransferScenario(link: BLELinkConfiguration(), messageSize: size, messageCount: 1).message(0x0201) }
        #expect(message(1) == [0x01])
        #expect(message(3) == [0x01, 0x02, 0x00])
        #expect(message(0).isEmpty)
    }
}
