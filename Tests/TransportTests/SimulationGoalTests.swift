import BLELink
import Simulator
import Testing
@testable import Transport

/// The throughput and delivery goals for the real Transport (TransportEndpoint) over the BLE air-time simulator.
@Suite("Simulation goals for Transport")
struct SimulationGoalTests {
    static let baseline = BLELinkConfiguration(
        phy: .le1M, linkLayerPayload: 27, attMTU: 23, connectionInterval: .milliseconds(10))
    static let fast = BLELinkConfiguration(
        phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500))
    static let fastEncrypted = BLELinkConfiguration(
        phy: .le2M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .microseconds(7_500), encrypted: true)
    static let longInterval = BLELinkConfiguration(
        phy: .le1M, linkLayerPayload: 251, attMTU: 247, connectionInterval: .milliseconds(30))

    static let faults = SimulatedFaults(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01)

    /// On a thread of its own (``BlockingCall``): a simulated transfer computes for up to a second without
    /// suspending, which would hold one of the cooperative threads every test of the process shares.
    static func transfer(
        _ link: BLELinkConfiguration, faults: SimulatedFaults = .none, seed: UInt64 = 1, bytes: Int = 256 << 10
    ) async throws -> TransferReport {
        try await BlockingCall.run { try transferHere(link, faults: faults, seed: seed, bytes: bytes) }
    }

    static func transferHere(
        _ link: BLELinkConfiguration, faults: SimulatedFaults = .none, seed: UInt64 = 1, bytes: Int = 256 << 10
    ) throws -> TransferReport {
        let messageSize = 32 << 10
        let scenario = TransferScenario(
            link: link, faults: faults, seed: seed, messageSize: messageSize, messageCount: bytes / messageSize)
        return try SimulatedTransfer.run(scenario, sender: TransportEndpoint(), receiver: TransportEndpoint())
    }

    @Test(arguments: [baseline, fast, fastEncrypted, longInterval])
    func faultFreeEfficiencyIsAtLeast90Percent(link: BLELinkConfiguration) async throws {
        let report = try await Self.transfer(link)
        #expect(report.isExactlyOnceInOrder)
        #expect(report.efficiency >= 0.90, "efficiency \(report.efficiency): \(report.goodputKbps) of \(report.limitKbps) kbit/s")
    }

    @Test(arguments: [fast, fastEncrypted, longInterval])
    func faultMixDeliversExactlyOnceAtThreeQuartersOfFaultFreeGoodput(link: BLELinkConfiguration) async throws {
        let clean = try await Self.transfer(link)
        let faulty = try await Self.transfer(link, faults: Self.faults, seed: 2)
        #expect(faulty.isExactlyOnceInOrder, "\(faulty.messagesDelivered) of \(faulty.messagesSent) delivered")
        #expect(faulty.goodputKbps >= 0.75 * clean.goodputKbps, "\(faulty.goodputKbps) vs \(clean.goodputKbps) kbit/s")
    }

    /// The baseline's fault-free run, shared by the seeds below (computed once).
    static let cleanBaseline = Result { try transferHere(baseline) }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func faultMixOnTheBaselineLinkDeliversExactlyOnceAtThreeQuartersOfFaultFreeGoodput(seed: UInt64) async throws {
        let clean = try Self.cleanBaseline.get()
        let faulty = try await Self.transfer(Self.baseline, faults: Self.faults, seed: seed)
        #expect(faulty.isExactlyOnceInOrder, "\(faulty.messagesDelivered) of \(faulty.messagesSent) delivered")
        #expect(faulty.goodputKbps >= 0.75 * clean.goodputKbps, "\(faulty.goodputKbps) vs \(clean.goodputKbps) kbit/s")
    }

    /// Transfers long enough for several drops: 512 KiB take about 23 s on the baseline, 1 MiB 6.5 s on the fast link.
    @Test(arguments: [(baseline, 512 << 10), (fast, 1 << 20)])
    func disconnectEveryTwoSecondsStillDeliversEveryMessageExactlyOnce(link: BLELinkConfiguration, bytes: Int) async throws {
        let faults = SimulatedFaults(disconnectEvery: .seconds(2), reconnectDelay: .milliseconds(350))
        let report = try await Self.transfer(link, faults: faults, seed: 3, bytes: bytes)
        #expect(report.link.disconnects >= 2)
        #expect(report.isExactlyOnceInOrder, "\(report.messagesDelivered) of \(report.messagesSent) delivered")
    }

    @Test func mtuExchangeOnEveryReconnectStillDeliversEveryMessageExactlyOnce() async throws {
        var link = Self.fast
        link.initialATTMTU = 23
        let faults = SimulatedFaults(disconnectEvery: .seconds(1), reconnectDelay: .milliseconds(350))
        let report = try await Self.transfer(link, faults: faults, seed: 4, bytes: 512 << 10)
        #expect(report.link.disconnects >= 2)
        #expect(report.isExactlyOnceInOrder, "\(report.messagesDelivered) of \(report.messagesSent) delivered")
    }

    @Test func benchRunsAreDeterministicPerSeed() async throws {
        let one = try await Self.transfer(Self.fast, faults: Self.faults, seed: 9, bytes: 64 << 10)
        let two = try await Self.transfer(Self.fast, faults: Self.faults, seed: 9, bytes: 64 << 10)
        #expect(one == two)
    }
}
