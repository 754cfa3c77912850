import GATT
import Simulator
import Testing
@testable import Transport

/// The air-time model of an LE credit-based channel beside GATT's, for the same PHY, data length and interval.
@Suite("Simulated L2CAP channel")
struct SimulationChannelTests {
    static func limit(_ phy: LEPHY, ll: Int, mtu: Int, bearer: SimulatedBearer) -> Double {
        var configuration = BLELinkConfiguration(phy: phy, linkLayerPayload: ll, attMTU: mtu, connectionInterval: .seconds(4))
        configuration.bearer = bearer
        return AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
    }

    @Test func anSDUIsCutIntoKFramesWithTheirHeadersAndThenIntoLinkLayerPDUs() {
        var configuration = BLELinkConfiguration(linkLayerPayload: 27, attMTU: 23)
        configuration.bearer = .channel(mtu: 2048, mps: 247)
        let model = AirTimeModel(configuration: configuration)
        // 500 bytes: frame 502, SDU length 2 -> 504 bytes of K-frame payload: 247 + 247 + 10, each + 4 header.
        let sizes = model.fragments(ofPacketSize: 500)
        let total: Int = sizes.reduce(0, +)
        #expect(total == 516)  // 500 + frame 2 + SDU length 2 + three K-frame headers of 4
        #expect(sizes.allSatisfy { $0 <= 27 })
        // A small packet: one K-frame of 2 + 2 + 20 + 4 = 28 bytes -> 27 + 1.
        #expect(model.fragments(ofPacketSize: 20) == [27, 1])
    }

    /// Where each LL PDU carries a whole K-frame, a channel's 4-byte K-frame header costs about what GATT's
    /// 3-byte ATT header does: their limits are within 2% at 2M/LL 251. On a short LL payload (1M, LL 27) a
    /// K-frame of 23 bytes fills a PDU with 23 bytes of stream where GATT's MTU 23 carries 20: the channel wins.
    @Test func channelAndGATTLimitsForTheSameAir() {
        let gatt = Self.limit(.le2M, ll: 251, mtu: 247, bearer: .gatt)
        let channel = Self.limit(.le2M, ll: 251, mtu: 247, bearer: .channel(mtu: 1974, mps: 247))
        #expect(abs(channel - gatt) / gatt < 0.02, "channel \(channel) kbit/s, GATT \(gatt) kbit/s")
        let gattSlow = Self.limit(.le1M, ll: 27, mtu: 23, bearer: .gatt)
        let channelSlow = Self.limit(.le1M, ll: 27, mtu: 23, bearer: .channel(mtu: 2050, mps: 23))
        #expect(channelSlow > 1.1 * gattSlow, "channel \(channelSlow) kbit/s, GATT \(gattSlow) kbit/s")
    }

    @Test func transportOverASimulatedChannelDeliversEveryMessageOnce() throws {
        var link = BLELinkConfiguration(phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(15))
        link.bearer = .channel(mtu: 2050, mps: 247)
        let scenario = TransferScenario(link: link, seed: 11, messageSize: 65_536, messageCount: 4)
        let report = try SimulatedTransfer.run(scenario, sender: TransportEndpoint(), receiver: TransportEndpoint())
        #expect(report.isExactlyOnceInOrder)
        #expect(report.messagesDelivered == 4)
    }

    @Test func aChannelOutsideItsLimitsIsRefused() {
        var configuration = BLELinkConfiguration()
        configuration.bearer = .channel(mtu: 10, mps: 247)
        #expect(throws: SimulationError.self) { try configuration.validate() }
    }
}
