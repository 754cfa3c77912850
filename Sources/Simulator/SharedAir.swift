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
