import GATT
import Simulator
import Testing
@testable import Transport

@Suite("Simulation air time")
struct SimulationAirTimeTests {
    static let pduVectors: [(LEPHY, Bool, Int, Int64)] = [
        (.le1M, false, 0, 80_000),  // empty PDU: 10 bytes at 1 µs/bit
        (.le1M, false, 27, 296_000),
        (.le1M, true, 27, 328_000),  // + 4-byte MIC
        (.le1M, true, 0, 80_000),  // an empty PDU carries no MIC
        (.le2M, false, 0, 44_000),  // 2-byte preamble, 0.5 µs/bit
        (.le2M, true, 251, 1_064_000),
        (.le1M, false, 251, 2_088_000),
        // Coded S=8: 376 µs before the PDU (preamble 80, AA 256, CI 16, TERM1 24), 64 µs a byte, TERM2 24 µs.
        (.coded, false, 0, 720_000),  // 5 bytes: header + CRC
        (.coded, false, 27, 2_448_000),
        (.coded, true, 27, 2_704_000),  // the Core spec's smallest connMaxTxTime on Coded
        (.coded, true, 251, 17_040_000),  // and its largest
    ]

    @Test(arguments: pduVectors)
    func pduAirTimeFollowsTheFrameLayout(phy: LEPHY, encrypted: Bool, payload: Int, nanoseconds: Int64) {
        let model = AirTimeModel(
            configuration: BLELinkConfiguration(phy: phy, linkLayerPayload: 251, attMTU: 247, encrypted: encrypted))
        #expect(model.pduNanoseconds(payload: payload) == nanoseconds)
    }

    @Test func packetsAreCutIntoLinkLayerFragmentsWithTheirATTAndL2CAPHeaders() {
        let model = AirTimeModel(configuration: BLELinkConfiguration(linkLayerPayload: 27, attMTU: 247))
        #expect(model.fragments(ofPacketSize: 244) == [27, 27, 27, 27, 27, 27, 27, 27, 27, 8])
        #expect(model.fragments(ofPacketSize: 20) == [27])
    }

    @Test func referenceLimit2MPhyLL251MTU247EncryptedIsAbout1390kbps() {
        let configuration = BLELinkConfiguration(
            phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .seconds(4), encrypted: true)
        let kbps = AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
        #expect(abs(kbps - 1_390) / 1_390 < 0.02, "limit \(kbps) kbit/s")
    }

    @Test func referenceLimit1MPhyLL27MTU23EncryptedIsAbout226kbps() {
        // 20 value bytes per 328 + 150 + 80 + 150 µs = 225.99 kbit/s (236.7 without encryption).
        let configuration = BLELinkConfiguration(
            phy: .le1M, linkLayerPayload: 27, attMTU: 23, connectionInterval: .seconds(4), encrypted: true)
        let kbps = AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
        #expect(abs(kbps - 226) / 226 < 0.02, "limit \(kbps) kbit/s")
    }

    @Test func unencryptedBaselineIsTheClassic236kbps() {
        let configuration = BLELinkConfiguration(connectionInterval: .seconds(4))
        let kbps = AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
        #expect(abs(kbps - 236.7) < 0.5, "limit \(kbps) kbit/s")
    }

    @Test func codedBaselineCarries20BytesPerExchangeOfSlowPDUs() {
        // 20 value bytes per 2448 + 150 + 720 + 150 µs = 46.1 kbit/s: a fifth of 1M's 236.7.
        let configuration = BLELinkConfiguration(phy: .coded, connectionInterval: .seconds(4))
        let kbps = AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
        #expect(abs(kbps - 160.0 / 3.468) < 0.05, "limit \(kbps) kbit/s")
    }

    @Test func aCodedExchangeOfLongPDUsDoesNotFitAShortInterval() throws {
        // LL 251 both ways: 16784 + 150 + 16784 µs, more than a 30 ms interval holds; 50 ms holds it.
        #expect(throws: SimulationError.self) {
            try BLELinkConfiguration(phy: .coded, linkLayerPayload: 251, attMTU: 247).validate()
        }
        try BLELinkConfiguration(phy: .coded, linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(50)).validate()
    }

    @Test func perEventCapBoundsTheLimit() {
        // 4 packets of 20 bytes every 30 ms.
        let configuration = BLELinkConfiguration(connectionInterval: .milliseconds(30), packetsPerEvent: 4)
        let kbps = AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
        #expect(abs(kbps - 4 * 20 * 8 / 30.0) < 0.001)
    }

    @Test func shortIntervalLosesTheTailThatDoesNotFitBeforeTheNextAnchor() {
        // 2M/251/247 at 7.5 ms: exchanges of 1392 µs; 5 fit into 7.35 ms, so 5 × 244 bytes per 7.5 ms.
        let configuration = BLELinkConfiguration(
            phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))
        let kbps = AirTimeModel(configuration: configuration).applicationThroughputLimit / 1_000
        #expect(abs(kbps - 5 * 244 * 8 / 7.5) < 0.001)
    }

    @Test(arguments: [
        BLELinkConfiguration(linkLayerPayload: 26),
        BLELinkConfiguration(linkLayerPayload: 252),
        BLELinkConfiguration(attMTU: 22),
        BLELinkConfiguration(connectionInterval: .milliseconds(7)),
        BLELinkConfiguration(packetsPerEvent: 0),
        BLELinkConfiguration(controllerBufferPackets: 0),
    ])
    func invalidConfigurationIsRejected(configuration: BLELinkConfiguration) {
        #expect(throws: SimulationError.self) { try configuration.validate() }
    }

    @Test func aChannelIsSetBesideGATTOnTheSameAir() {
        var channel = BLELinkConfiguration(phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))
        let gatt = AirTimeModel(configuration: channel)
        channel.bearer = .channel(mtu: 2_048, mps: 247)
        let model = AirTimeModel(configuration: channel)
        #expect(model.gattLimitKbps == gatt.limitKbps)
        #expect(model.limitKbps != model.gattLimitKbps)
        #expect(gatt.gattLimitKbps == gatt.limitKbps)
    }

    @Test func theBestCaseOfARealLinkAssumesTheFastestAirAndClampsTheMTU() {
        let best = AirTimeModel.bestCase(attMTU: 247)
        #expect(best.configuration == BLELinkConfiguration(
            phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500)))
        #expect(AirTimeModel.bestCase(attMTU: 9_000).configuration.attMTU == 517)
        #expect(AirTimeModel.bestCase(attMTU: 0).configuration.attMTU == 23)
        let slow = AirTimeModel.bestCase(attMTU: 247, phy: .le1M, interval: .milliseconds(50))
        #expect(slow.configuration.connectionInterval == .milliseconds(50))
        #expect(slow.limitKbps < best.limitKbps)
    }

    @Test func aRealLinksLimitNeedsItsMTUAndAModelledPHY() {
        #expect(AirTimeModel.bestCaseLimitKbps(attMTU: 247, phy: nil, interval: nil) == AirTimeModel.bestCase(attMTU: 247).limitKbps)
        let slow = AirTimeModel.bestCase(attMTU: 185, phy: .le1M, interval: .milliseconds(30)).limitKbps
        #expect(AirTimeModel.bestCaseLimitKbps(attMTU: 185, phy: .le1M, interval: .milliseconds(30)) == slow)
        #expect(AirTimeModel.bestCaseLimitKbps(attMTU: nil, phy: .le2M, interval: nil) == nil)
        #expect(AirTimeModel.bestCaseLimitKbps(attMTU: 247, phy: .coded, interval: nil) == nil)
    }
}
