import Transport
/// Several connections of one controller sharing its air time.
///
/// The model: a controller serving `linkCount` connections with the same interval gives each one a slot of
/// `interval / linkCount` per interval (their connection events interleave, as a controller schedules
/// connection anchors apart). Each link then runs as a ``BLELinkConfiguration`` whose event ends
/// `interval / linkCount` after its anchor, keeping the configured ``BLELinkConfiguration/eventEndMargin``.
/// Links do not otherwise interact: the model holds no collisions, no retransmissions caused by another
/// link and no scheduler that lends one link's unused slot to another (a real controller may, so an idle
/// link's share is lost here).
public enum SharedAir {
    /// The configuration one of `linkCount` links sharing `configuration`'s air sees.
    public static func configuration(
        _ configuration: BLELinkConfiguration, linkCount: Int
    ) throws(SimulationError) -> BLELinkConfiguration {
        guard linkCount >= 1 else { throw .invalidConfiguration("link count must be at least 1, got \(linkCount)") }
        var shared = configuration
        let interval = nanoseconds(configuration.connectionInterval)
        let slot = interval / Int64(linkCount)
        shared.eventEndMargin = .nanoseconds(interval - slot + nanoseconds(configuration.eventEndMargin))
        do {
            try shared.validate()
        } catch {
            throw .invalidConfiguration("\(linkCount) links cannot share one \(configuration.connectionInterval) interval: \(error.description)")
        }
        return shared
    }

    /// Runs `scenario` on `linkCount` links sharing the air; link `i` uses seed `scenario.seed &+ i`, so the
    /// reports are deterministic for a seed. `makeEndpoints` gives each link a fresh sender and receiver.
    public static func run<Sender: SimulatedMessageEndpoint, Receiver: SimulatedMessageEndpoint>(
        _ scenario: TransferScenario, linkCount: Int, makeEndpoints: () -> (Sender, Receiver)
    ) throws(SimulationError) -> [TransferReport] {
        var shared = scenario
        shared.link = try configuration(scenario.link, linkCount: linkCount)
        shared.timeLimit = scenario.timeLimit * linkCount
        var reports: [TransferReport] = []
        for index in 0 ..< linkCount {
            var linkScenario = shared
            linkScenario.seed = scenario.seed &+ UInt64(index)
            let (sender, receiver) = makeEndpoints()
            reports.append(try SimulatedTransfer.run(linkScenario, sender: sender, receiver: receiver))
        }
        return reports
    }
}

extension SharedAir {
    /// ``run(_:linkCount:makeEndpoints:)`` with the numbers that judge it: each link against its slot, all
    /// of them against one link owning the air and against the slotted air, and their fairness.
    ///
    /// ```swift
    /// let shared = try SharedAir.report(scenario, linkCount: 4) { (TransportEndpoint(), TransportEndpoint()) }
    /// print(shared.total.goodputKbps, shared.sharedEfficiency, shared.fairness.jainIndex)
    /// ```
    public static func report<Sender: SimulatedMessageEndpoint, Receiver: SimulatedMessageEndpoint>(
        _ scenario: TransferScenario, linkCount: Int, makeEndpoints: () -> (Sender, Receiver)
    ) throws(SimulationError) -> SharedAirReport {
        SharedAirReport(
            links: try run(scenario, linkCount: linkCount, makeEndpoints: makeEndpoints),
            limitKbps: AirTimeModel(configuration: scenario.link).limitKbps)
    }
}

/// What links sharing one controller's air measured (``SharedAir/report(_:linkCount:makeEndpoints:)``).
public struct SharedAirReport: Sendable, Equatable {
    /// Each link's report; its `limitKbps` is the limit of its slot of the air.
    public var links: [TransferReport]
    /// The links as one (``TransferReport/aggregate(_:limitKbps:)``); its `limitKbps` is the limit of one link
    /// owning the air.
    public var total: TransferReport
    /// The slotted air's limit: the links' slot limits summed.
    public var sharedLimitKbps: Double
    /// How evenly the links shared the air.
    public var fairness: LinkFairness

    /// `links` judged against `limitKbps`, the limit of one link owning the air.
    public init(links: [TransferReport], limitKbps: Double) {
        self.links = links
        total = TransferReport.aggregate(links, limitKbps: limitKbps)
        sharedLimitKbps = links.reduce(0) { $0 + $1.limitKbps }
        fairness = LinkFairness(links)
    }

    /// The total goodput over ``sharedLimitKbps`` (0 when that is 0).
    public var sharedEfficiency: Double { sharedLimitKbps > 0 ? total.goodputKbps / sharedLimitKbps : 0 }

    /// True when every link's messages arrived exactly once, intact and in order.
    public var isExactlyOnceInOrder: Bool { links.allSatisfy(\.isExactlyOnceInOrder) }
}

extension TransferReport {
    /// The links' reports as one: counts and bytes summed, seconds the slowest link's, goodput the summed
    /// bytes over those seconds, against `limitKbps` (the limit of one link owning all the air).
    public static func aggregate(_ reports: [TransferReport], limitKbps: Double) -> TransferReport {
        var total = TransferReport()
        total.completed = !reports.isEmpty
        for report in reports {
            total.messagesSent += report.messagesSent
            total.messagesDelivered += report.messagesDelivered
            total.messagesLost += report.messagesLost
            total.messagesDuplicated += report.messagesDuplicated
            total.messagesCorrupted += report.messagesCorrupted
            total.messagesOutOfOrder += report.messagesOutOfOrder
            total.sendFailures += report.sendFailures
            total.payloadBytes += report.payloadBytes
            total.seconds = max(total.seconds, report.seconds)
            total.completed = total.completed && report.completed
            for side in 0 ..< 2 { total.link.packetsSent[side] += report.link.packetsSent[side] }
            total.link.packetsLost += report.link.packetsLost
            total.link.disconnects += report.link.disconnects
            total.link.connectionEvents += report.link.connectionEvents
        }
        total.goodputKbps = total.seconds > 0 ? Double(total.payloadBytes * 8) / total.seconds / 1000 : 0
        total.limitKbps = limitKbps
        total.efficiency = limitKbps > 0 ? total.goodputKbps / limitKbps : 0
        return total
    }
}
