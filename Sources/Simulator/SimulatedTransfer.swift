import Transport
/// Runs a ``TransferScenario`` through the BLE air-time simulator with two message endpoints (the sender as
/// central, the receiver as peripheral) and checks every delivered message against what was sent.
public enum SimulatedTransfer {
    /// Runs `scenario` to completion, to its time limit, or until nothing can happen any more.
    public static func run<Sender: SimulatedMessageEndpoint, Receiver: SimulatedMessageEndpoint>(
        _ scenario: TransferScenario, sender: Sender, receiver: Receiver
    ) throws(SimulationError) -> TransferReport {
        try scenario.validate()
        var simulator = try BLESimulator(
            configuration: scenario.link, faults: scenario.faults, seed: scenario.seed,
            central: sender, peripheral: receiver)
        var tally = DeliveryTally(scenario: scenario)
        var nextToOffer = 0
        let timeLimit = nanoseconds(scenario.timeLimit)
        while tally.distinct < scenario.messageCount, nanoseconds(simulator.now) <= timeLimit {
            simulator.withCentral { endpoint, now in
                while nextToOffer < scenario.messageCount, endpoint.offer(scenario.message(nextToOffer), now: now) {
                    nextToOffer += 1
                }
            }
            let progressed = try simulator.step()
            let deliveredAt = simulator.lastDelivery.toPeripheral
            simulator.withPeripheral { endpoint, _ in
                while let message = endpoint.takeDeliveredMessage() { tally.record(message, at: deliveredAt) }
            }
            tally.sendFailures += simulator.withCentral { endpoint, _ in endpoint.takeSendFailures() }
            if !progressed { break }
        }
        return tally.report(
            sent: nextToOffer, endedAt: simulator.now, statistics: simulator.statistics,
            limit: AirTimeModel(configuration: scenario.link).applicationThroughputLimit)
    }
}

/// Classifies each delivered message: new and intact, duplicate, corrupted, out of order.
private struct DeliveryTally {
    let scenario: TransferScenario
    var seen: [Bool]
    var distinct = 0
    var duplicated = 0
    var corrupted = 0
    var outOfOrder = 0
    var sendFailures = 0
    var highestIndex = -1
    var lastIntactDelivery = Duration.zero

    init(scenario: TransferScenario) {
        self.scenario = scenario
        self.seen = [Bool](repeating: false, count: scenario.messageCount)
    }

    mutating func record(_ message: [UInt8], at time: Duration) {
        guard message.count == scenario.messageSize else {
            corrupted += 1
            return
        }
        let index = Int(message[0]) | Int(message[1]) << 8 | Int(message[2]) << 16 | Int(message[3]) << 24
        guard index < scenario.messageCount, message == scenario.message(index) else {
            corrupted += 1
            return
        }
        if seen[index] {
            duplicated += 1
            return
        }
        seen[index] = true
        distinct += 1
        if index < highestIndex { outOfOrder += 1 }
        highestIndex = max(highestIndex, index)
        lastIntactDelivery = time
    }

    func report(sent: Int, endedAt end: Duration, statistics: SimulationStatistics, limit: Double) -> TransferReport {
        var report = TransferReport()
        report.messagesSent = sent
        report.messagesDelivered = distinct
        report.messagesLost = sent - distinct
        report.messagesDuplicated = duplicated
        report.messagesCorrupted = corrupted
        report.messagesOutOfOrder = outOfOrder
        report.sendFailures = sendFailures
        report.payloadBytes = distinct * scenario.messageSize
        report.completed = distinct == scenario.messageCount
        let elapsed = report.completed ? lastIntactDelivery : end
        report.seconds = Double(nanoseconds(elapsed)) / 1e9
        report.goodputKbps = report.seconds > 0 ? Double(report.payloadBytes * 8) / report.seconds / 1_000 : 0
        report.limitKbps = limit / 1_000
        report.efficiency = report.limitKbps > 0 ? report.goodputKbps / report.limitKbps : 0
        report.link = statistics
        return report
    }
}
