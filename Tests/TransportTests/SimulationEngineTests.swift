import Simulator
import Testing
@testable import Transport

@Suite("Simulation engine")
struct SimulationEngineTests {
    typealias Simulator = BLESimulator<SaturatingTestEndpoint, RecordingTestEndpoint>

    /// Runs a saturating central against a counting peripheral for `seconds` of simulated time.
    static func saturate(_ configuration: BLELinkConfiguration, seconds: Int64, faults: SimulatedFaults = .none, seed: UInt64 = 1)
        throws -> Simulator
    {
        var receiver = RecordingTestEndpoint()
        receiver.keepPackets = false
        var simulator = try Simulator(
            configuration: configuration, faults: faults, seed: seed, central: SaturatingTestEndpoint(),
            peripheral: receiver)
        while simulator.now < .seconds(seconds) { _ = try simulator.step() }
        return simulator
    }

    static let saturatedConfigurations: [BLELinkConfiguration] = [
        BLELinkConfiguration(phy: .le1M, linkLayerPayload: 27, attMTU: 23, connectionInterval: .milliseconds(10)),
        BLELinkConfiguration(
            phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500), encrypted: true),
        BLELinkConfiguration(phy: .le1M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(30)),
        BLELinkConfiguration(phy: .le2M, linkLayerPayload: 100, attMTU: 247, connectionInterval: .milliseconds(15)),
        BLELinkConfiguration(phy: .le2M, linkLayerPayload: 27, attMTU: 23, connectionInterval: .milliseconds(50), packetsPerEvent: 6),
        BLELinkConfiguration(phy: .le1M, linkLayerPayload: 27, attMTU: 185, connectionInterval: .milliseconds(45), encrypted: true),
    ]

    @Test(arguments: saturatedConfigurations)
    func saturatingSenderReachesTheTheoreticalLimit(configuration: BLELinkConfiguration) throws {
        let simulator = try Self.saturate(configuration, seconds: 3)
        let measured = Double(simulator.peripheral.bytesReceived * 8) / (Double(nanoseconds(simulator.peripheral.lastReceive)) / 1e9)
        let limit = AirTimeModel(configuration: configuration).applicationThroughputLimit
        #expect(abs(measured - limit) / limit < 0.03, "measured \(measured / 1000) kbit/s, limit \(limit / 1000)")
        #expect(simulator.statistics.emptyPDUs[1] == simulator.statistics.dataPDUs[0])
    }

    @Test func theSameSeedReplaysTheSameRunAndAnotherSeedDoesNot() throws {
        let configuration = BLELinkConfiguration(connectionInterval: .milliseconds(10))
        let faults = SimulatedFaults(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01)
        let one = try Self.saturate(configuration, seconds: 1, faults: faults, seed: 7)
        let two = try Self.saturate(configuration, seconds: 1, faults: faults, seed: 7)
        let other = try Self.saturate(configuration, seconds: 1, faults: faults, seed: 8)
        #expect(one.statistics == two.statistics)
        #expect(one.peripheral.bytesReceived == two.peripheral.bytesReceived)
        #expect(one.statistics != other.statistics)
    }

    @Test(arguments: [0.01, 0.1, 0.3])
    func faultRatesMatchTheirProbabilities(rate: Double) throws {
        let configuration = BLELinkConfiguration(phy: .le2M, connectionInterval: .milliseconds(10))
        let faults = SimulatedFaults(loss: rate, duplicate: rate, reorder: rate, corrupt: rate)
        let simulator = try Self.saturate(configuration, seconds: 10, faults: faults, seed: 3)
        let packets = Double(simulator.statistics.packetsSent[0])
        let tolerance = 0.2 * rate * packets + 30
        #expect(abs(Double(simulator.statistics.packetsLost) - rate * packets) < tolerance)
        #expect(abs(Double(simulator.statistics.packetsCorrupted) - rate * (1 - rate) * packets) < tolerance)
        #expect(abs(Double(simulator.statistics.packetsDuplicated) - rate * (1 - rate) * packets) < tolerance)
        #expect(simulator.statistics.packetsReordered > 0)
    }

    @Test func reorderDeliversAHeldPacketRightAfterTheNextOne() throws {
        var central = RecordingTestEndpoint()
        central.outgoing = (0..<200).map { [UInt8($0)] }
        var simulator = try BLESimulator(
            configuration: BLELinkConfiguration(), faults: SimulatedFaults(reorder: 0.2), seed: 11,
            central: central, peripheral: RecordingTestEndpoint())
        while try simulator.step() {}
        let order = simulator.peripheral.received.map { Int($0[0]) }
        #expect(order != order.sorted())
        #expect(order.count >= 199)
        for (position, value) in order.enumerated() { #expect(abs(value - position) <= 1) }
    }

    @Test func disconnectsHappenOnScheduleAndBothEndpointsSeeThem() throws {
        let faults = SimulatedFaults(disconnectEvery: .seconds(1), reconnectDelay: .milliseconds(400))
        let simulator = try Self.saturate(
            BLELinkConfiguration(connectionInterval: .milliseconds(20)), seconds: 5, faults: faults)
        // Up at 0, down at 1, up at 1.4, down at 2.4, up at 2.8, down at 3.8, up at 4.2, (down at 5.2).
        #expect(simulator.statistics.disconnects == 3)
        #expect(simulator.peripheral.connectionLog == ["up 20", "down", "up 20", "down", "up 20", "down", "up 20"])
        #expect(simulator.statistics.packetsLostToDisconnect > 0)
    }

    @Test func mtuExchangeRaisesThePacketSizeAfterTheFirstEventOfEachConnection() throws {
        let configuration = BLELinkConfiguration(
            linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(20), initialATTMTU: 23)
        let faults = SimulatedFaults(disconnectEvery: .seconds(1), reconnectDelay: .milliseconds(400))
        let simulator = try Self.saturate(configuration, seconds: 2, faults: faults)
        #expect(simulator.peripheral.connectionLog == ["up 20", "mtu 244", "down", "up 20", "mtu 244"])
        #expect(simulator.central.packetSize == 244)
    }

    @Test func timersFireAtTheirExactSimulatedTimeEvenBetweenEvents() throws {
        var peripheral = RecordingTestEndpoint()
        peripheral.timers = [.microseconds(12_345), .milliseconds(95), .seconds(3)]
        var simulator = try BLESimulator(
            configuration: BLELinkConfiguration(connectionInterval: .milliseconds(50)), seed: 1,
            central: RecordingTestEndpoint(), peripheral: peripheral)
        while try simulator.step() {}
        #expect(simulator.peripheral.firedAt == [.microseconds(12_345), .milliseconds(95), .seconds(3)])
    }

    @Test func idleLinkStopsWhenNothingCanHappen() throws {
        var simulator = try BLESimulator(
            configuration: BLELinkConfiguration(), seed: 1, central: RecordingTestEndpoint(),
            peripheral: RecordingTestEndpoint())
        #expect(try simulator.step() == false)
    }

    @Test func oversizedPacketFromAnEndpointIsAnError() throws {
        var central = RecordingTestEndpoint()
        central.outgoing = [[UInt8](repeating: 0, count: 21)]
        var simulator = try BLESimulator(
            configuration: BLELinkConfiguration(), seed: 1, central: central, peripheral: RecordingTestEndpoint())
        #expect(throws: SimulationError.packetTooLarge(size: 21, limit: 20)) { _ = try simulator.step() }
    }

    @Test func bothDirectionsShareTheEvents() throws {
        var central = RecordingTestEndpoint()
        var peripheral = RecordingTestEndpoint()
        central.outgoing = (0..<50).map { [UInt8($0), 1] }
        peripheral.outgoing = (0..<30).map { [UInt8($0), 2] }
        var simulator = try BLESimulator(
            configuration: BLELinkConfiguration(), seed: 1, central: central, peripheral: peripheral)
        while try simulator.step() {}
        #expect(simulator.peripheral.received == (0..<50).map { [UInt8($0), 1] })
        #expect(simulator.central.received == (0..<30).map { [UInt8($0), 2] })
        #expect(simulator.statistics.dataPDUs == [50, 30])
        #expect(simulator.statistics.emptyPDUs == [0, 20])
    }
}
