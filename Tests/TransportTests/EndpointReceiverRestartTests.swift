import MemoryLinks
import Testing
@testable import Transport

/// A receiver that holds acknowledgements until its application kept a message (listen --out-dir) and
/// restarts, as a killed process, while a sender has many messages in flight.
@Suite struct EndpointReceiverRestartTests {
    private static var holding: EndpointConfiguration {
        var configuration = EndpointConfiguration()
        configuration.holdsAcknowledgements = true
        return configuration
    }

    /// Accepts what the application took, `batch` at a time (a group commit), running `step` of fake time in between.
    private func runAccepting(
        _ harness: inout EndpointHarness, accepted: inout Int, commit: Duration = .milliseconds(3), for limit: Duration,
        until done: (EndpointHarness) -> Bool
    ) -> Bool {
        let end = harness.now + limit
        while harness.now < end {
            if done(harness) { return true }
            _ = harness.run(for: commit) { _ in false }
            while accepted < harness.delivered[1].count {
                harness.endpoints[1].accept(harness.delivered[1][accepted])
                accepted += 1
            }
        }
        return done(harness)
    }

    @Test(arguments: 1 ... 24 as ClosedRange<UInt64>)
    func everyMessageCompletesWhenTheReceiverRestartsWithManyInFlight(seed: UInt64) throws {
        var harness = EndpointHarness(packetSize: 185, seed: seed, configuration: Self.holding)
        var rng = SplitMix64(seed: seed &* 7919)
        let sizes = [1, 100, 100, 100, 2_000, 100, 30_000, 100, 100, 500]
        let count = 48
        for index in 0 ..< count {
            try harness.submit(from: .a, payload(size: sizes[index % sizes.count], seed: UInt64(index)))
        }
        var accepted = 0
        for _ in 0 ..< 6 {
            let wait = Duration.milliseconds(Int.random(in: 5 ... 120, using: &rng))
            let commit = Duration.milliseconds(Int.random(in: 1 ... 40, using: &rng))
            _ = runAccepting(&harness, accepted: &accepted, commit: commit, for: wait) { _ in false }
            // The receiving process dies; messages it took and had not accepted are gone with it.
            harness.arrivals.removeAll()
            for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
            harness.endpoints[1] = TransportEndpoint(configuration: Self.holding)
            accepted = harness.delivered[1].count
            for index in 0 ..< 2 {
                harness.endpoints[index].linkConnected(maximumPacketSize: harness.packetSize, now: harness.now)
            }
        }
        let finished = runAccepting(&harness, accepted: &accepted, for: .seconds(60)) {
            $0.endpoints[0].isSendIdle
        }
        let completed = harness.events[0].compactMap { if case let .sendCompleted(_, id) = $0 { id } else { nil } }
        let failures = harness.events[0].compactMap { if case let .sendFailed(_, error) = $0 { error } else { nil } }
        #expect(finished, "stalled: \(harness.endpoints[0].debugSummary) / \(harness.endpoints[1].debugSummary)")
        #expect(failures.isEmpty)
        #expect(Set(completed) == Set((1 ... UInt32(count)).map { $0 }))
    }

    /// A sender can finish ids that a new receiver still waits for (their `complete` came from the receiver's previous
    /// process); a parked sender's hello, repeated with each probe, moves that receiver on to what the sender still has.
    @Test func aReceiverWaitingForIdsTheSenderFinishedElsewhereMovesOnAtTheParkedSendersProbe() throws {
        var harness = EndpointHarness(packetSize: 185, configuration: Self.holding)
        for index in 0 ..< 6 { try harness.submit(from: .a, payload(size: 100, seed: UInt64(index))) }
        #expect(harness.run(for: .seconds(5)) { $0.delivered[1].count == 4 })
        // The receiving process dies holding 1-4; a new one takes the link and hears hello(first id 1).
        harness.arrivals.removeAll()
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        harness.endpoints[1] = TransportEndpoint(configuration: Self.holding)
        for index in 0 ..< 2 {
            harness.endpoints[index].linkConnected(maximumPacketSize: harness.packetSize, now: harness.now)
        }
        #expect(harness.run(for: .seconds(5)) { $0.endpoints[0].senderSummary.contains("greeted true") })
        // Answers from the previous process: the sender takes ids 1-3 as kept.
        for id: UInt32 in 1 ... 3 {
            var packet: [UInt8] = []
            TransportControl.complete(messageID: id).encode(into: &packet)
            harness.endpoints[0].receive(packet[...], now: harness.now)
        }
        var accepted = harness.delivered[1].count
        let finished = runAccepting(&harness, accepted: &accepted, for: .seconds(10)) { $0.endpoints[0].isSendIdle }
        #expect(finished, "stalled: \(harness.endpoints[0].debugSummary) / \(harness.endpoints[1].debugSummary)")
        #expect(harness.delivered[1].suffix(3).map(\.messageID) == [4, 5, 6])
    }

    /// Messages completed out of order and held for acceptance wait for the next one in order; they cannot keep it out.
    @Test func theNextMessageInOrderIsAdmittedPastHeldMessagesCompletedAfterIt() throws {
        var configuration = Self.holding
        configuration.maximumMessagesInProgress = 2
        var sender = TransportEndpoint(configuration: configuration)
        var receiver = TransportEndpoint(configuration: configuration)
        for endpoint in [0, 1] {
            if endpoint == 0 { sender.linkConnected(maximumPacketSize: 185, now: .zero) }
            else { receiver.linkConnected(maximumPacketSize: 185, now: .zero) }
        }
        for index in 0 ..< 3 { _ = try sender.submit(payload(size: 50, seed: UInt64(index)), options: SendOptions(), now: .zero) }
        var packets: [[UInt8]] = []
        var buffer: [UInt8] = []
        while packets.count < 8, sender.writeNextPacket(into: &buffer, now: .zero) { packets.append(buffer) }
        // hello, then the Starts of 1, 2 and 3 (one packet each): 2 and 3 arrive first.
        #expect(packets.count == 4)
        for index in [0, 2, 3, 1] { receiver.receive(packets[index][...], now: .zero) }
        var delivered: [UInt32] = []
        while let message = receiver.takeMessage() { delivered.append(message.messageID) }
        #expect(delivered == [1, 2, 3])
    }
}
