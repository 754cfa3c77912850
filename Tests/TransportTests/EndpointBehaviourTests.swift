import PropertyBased
import Testing
import Transport

@Suite struct EndpointBehaviourTests {
    @Test func deflatedMessageArrivesInflatedAndTravelsSmaller() throws {
        var harness = EndpointHarness(packetSize: 20)
        let body = Array(repeating: Array("msgpipe moves whole messages. ".utf8), count: 200).flatMap { $0 }
        try harness.submit(from: .a, body, options: SendOptions(compress: true))
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].first?.body == body)
        #expect(harness.bytesSent[0] < body.count / 5)
    }

    @Test func zipBombIsRejectedWithATypedErrorOnBothSides() throws {
        var sender = EndpointConfiguration()
        sender.maximumMessageSize = 4 << 20
        var receiver = EndpointConfiguration()
        receiver.maximumMessageSize = 64 * 1024
        var harness = EndpointHarness(packetSize: 244, configuration: sender, receiverConfiguration: receiver)
        try harness.submit(from: .a, [UInt8](repeating: 0, count: 4 << 20), options: SendOptions(compress: true))
        #expect(harness.run { $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].isEmpty)
        #expect(harness.events[1].contains(.receiveFailed(.inflateFailed(messageID: 1, limit: 64 * 1024))))
        guard case .sendFailed(_, .rejectedByPeer(1, .inflateFailed)) = harness.events[0].first else {
            Issue.record("expected rejection, got \(harness.events[0])")
            return
        }
        #expect(harness.endpoints[1].receiverBufferedBytes == 0)
    }

    /// Found by Fuzz/Sources/TransportFuzzer: deflated messages were admitted at their size on the wire and then
    /// inflated, so a peer whose Start packets arrive first made a stalled receiver hold up to (messages in progress
    /// + 1) × maximum message size, far beyond its configured maximum of buffered bytes.
    @Test func deflatedMessagesCannotInflateTheReceiverBeyondItsBufferLimit() throws {
        var receiverConfiguration = EndpointConfiguration()
        receiverConfiguration.maximumMessageSize = 3000
        receiverConfiguration.maximumBufferedBytes = 6000
        receiverConfiguration.maximumMessagesInProgress = 4
        var sender = TransportEndpoint(session: 1)
        var receiver = TransportEndpoint(configuration: receiverConfiguration, session: 2)
        sender.linkConnected(maximumPacketSize: 64, now: .zero)
        receiver.linkConnected(maximumPacketSize: 64, now: .zero)
        let bodies = (1...4).map { seed in payload(size: 1000, seed: seed) + [UInt8](repeating: 7, count: 2000) }
        for body in bodies { _ = try sender.submit(body, options: SendOptions(compress: true), now: .zero) }
        // hello and welcome, then every data packet the window allows, Start packets delivered first.
        var packet: [UInt8] = []
        var data: [[UInt8]] = []
        for _ in 0 ..< 3 {
            while sender.writeNextPacket(into: &packet, now: .zero) {
                if packet.starts(with: [0xC0, 0x11]) { receiver.receive(packet[...], now: .zero) } else { data.append(packet) }
            }
            while receiver.writeNextPacket(into: &packet, now: .zero) { sender.receive(packet[...], now: .zero) }
        }
        #expect(data.filter { $0[0] & 0x80 != 0 }.count == 4)
        var mostHeld = 0
        for packet in data.filter({ $0[0] & 0x80 != 0 }) + data.filter({ $0[0] & 0x80 == 0 }) {
            receiver.receive(packet[...], now: .zero)
            mostHeld = max(mostHeld, receiver.receiverBufferedBytes)
        }
        // One message may go beyond the limit: the next in order once the application has taken everything.
        let limit = receiverConfiguration.maximumBufferedBytes + receiverConfiguration.maximumMessageSize + 4
        #expect(mostHeld <= limit)
        #expect(receiver.availableMessages <= 2)
    }

    @Test func messageAboveTheReceiversMaximumIsRejected() throws {
        var receiver = EndpointConfiguration()
        receiver.maximumMessageSize = 1000
        var harness = EndpointHarness(packetSize: 20, receiverConfiguration: receiver)
        try harness.submit(from: .a, payload(size: 5000, seed: 1))
        try harness.submit(from: .a, payload(size: 10, seed: 2))
        #expect(harness.run { $0.endpoints[0].isSendIdle && $0.delivered[1].count == 1 })
        #expect(harness.delivered[1].map(\.messageID) == [2])
        #expect(harness.events[0].contains { if case .sendFailed(_, .rejectedByPeer(1, .tooLarge)) = $0 { true } else { false } })
    }

    @Test func stalledReceiverStopsTheSenderWithinItsMemoryLimit() throws {
        var receiver = EndpointConfiguration()
        receiver.maximumMessagesInProgress = 2
        receiver.maximumBufferedBytes = 64 * 1024
        var harness = EndpointHarness(packetSize: 244, receiverConfiguration: receiver)
        harness.consuming[1] = false
        let bodies = (0 ..< 10).map { payload(size: 20_000, seed: UInt64($0)) }
        for body in bodies { try harness.submit(from: .a, body) }
        harness.run(for: .seconds(30)) { _ in false }
        let completed = harness.events[0].count { if case .sendCompleted = $0 { true } else { false } }
        #expect(completed == 2)
        #expect(harness.maximumReceiverBytes[1] <= 64 * 1024 + 20_004)
        #expect(harness.events[0].allSatisfy { if case .sendFailed = $0 { false } else { true } })
        // The application reads again: everything arrives, in order, once.
        harness.consuming[1] = true
        #expect(harness.run { $0.delivered[1].count == bodies.count && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.body) == bodies)
    }

    @Test func messagesSentOneAtATimeDoNotWaitForAQuietChannel() throws {
        // Each completed with every packet sent once: nothing of it is left on the way, so its channel is free
        // at once. Resting each channel for a retransmission timeout (300 ms at first) made every fifth message
        // wait that long.
        var harness = EndpointHarness(packetSize: 64)
        for index in 0 ..< 12 {
            try harness.submit(from: .a, payload(size: 40, seed: UInt64(index)))
            #expect(harness.run(for: .seconds(5)) { $0.delivered[1].count == index + 1 && $0.events[0].count == index + 1 })
        }
        #expect(harness.delivered[1].map(\.body) == (0 ..< 12).map { payload(size: 40, seed: UInt64($0)) })
        #expect(harness.now < .milliseconds(300), "12 one-packet messages took \(harness.now) of fake time")
    }

    @Test func deadlineFailsAMessageTheLinkCannotCarry() throws {
        var harness = EndpointHarness(packetSize: 20, faults: FaultProfile(loss: 1.0))
        try harness.submit(from: .a, payload(size: 100, seed: 1), options: SendOptions(deadline: .seconds(2)))
        #expect(harness.run { !$0.events[0].isEmpty })
        #expect(harness.events[0].count == 1)
        guard case .sendFailed(_, .deadlineExceeded(1)) = harness.events[0].first else {
            Issue.record("expected deadline, got \(harness.events[0])")
            return
        }
        #expect(harness.now >= .seconds(2) && harness.now < .seconds(3))
    }

    @Test func deadLinkExhaustsRetriesWithATypedError() throws {
        var harness = EndpointHarness(packetSize: 20, faults: FaultProfile(loss: 1.0))
        try harness.submit(from: .a, payload(size: 100, seed: 1))
        #expect(harness.run(for: .seconds(600)) { !$0.events[0].isEmpty })
        guard case .sendFailed(_, .retriesExhausted(1, 10)) = harness.events[0].first else {
            Issue.record("expected retries exhausted, got \(harness.events[0])")
            return
        }
        #expect(harness.peerSilences[0] == 5, "after timeouts 2, 4, 6, 8 and 10: the driver was asked to renew")
    }

    @Test func requestIsAnsweredWithItsCorrelatedResponse() throws {
        var harness = EndpointHarness(packetSize: 20, faults: FaultProfile(loss: 0.1), seed: 4)
        let request = try harness.submit(
            from: .a, Array("status?".utf8), options: SendOptions(kind: .request, deadline: .seconds(30)))
        #expect(harness.run { $0.delivered[1].count == 1 })
        let received = try #require(harness.delivered[1].first)
        #expect(received.isRequest)
        try harness.submit(from: .b, Array("ok".utf8), options: SendOptions(kind: .response(to: received.messageID)))
        #expect(harness.run { $0.events[0].contains { if case .responseReceived = $0 { true } else { false } } })
        #expect(harness.events[0].contains(.responseReceived(request, ReceivedMessage(messageID: 1, body: Array("ok".utf8), correlationID: 1))))
        #expect(harness.delivered[0].isEmpty)
    }

    @Test func unansweredRequestTimesOut() throws {
        var harness = EndpointHarness(packetSize: 20)
        let request = try harness.submit(
            from: .a, Array("status?".utf8), options: SendOptions(kind: .request, deadline: .seconds(1)))
        #expect(harness.run { $0.events[0].contains { if case .sendFailed = $0 { true } else { false } } })
        #expect(harness.events[0] == [.sendCompleted(request, messageID: 1), .sendFailed(request, .responseTimedOut(requestID: 1))])
    }

    @Test func cancelledMessageIsWithdrawnAndLaterOnesStillArrive() throws {
        var harness = EndpointHarness(packetSize: 20)
        let first = try harness.submit(from: .a, payload(size: 50_000, seed: 1))
        try harness.submit(from: .a, payload(size: 100, seed: 2))
        harness.run(for: .milliseconds(200)) { _ in false }
        harness.endpoints[0].cancel(first, now: harness.now)
        #expect(harness.run { $0.endpoints[0].isSendIdle && $0.delivered[1].count == 1 })
        #expect(harness.delivered[1].map(\.messageID) == [2])
        #expect(harness.events[0].first == .sendFailed(first, .cancelled))
        #expect(harness.endpoints[1].receiverBufferedBytes == 0)
    }

    @Test func randomMessagesSurviveRandomFaults() async {
        await propertyCheck(
            count: 12, input: Gen.int(in: 0 ... 256 * 1024), Gen.int(in: 0 ... 1000), Gen.int(in: 20 ... 244)
        ) { size, seed, packetSize in
            var harness = EndpointHarness(
                packetSize: packetSize,
                faults: FaultProfile(loss: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01), seed: UInt64(seed))
            let bodies = [payload(size: size, seed: UInt64(seed)), payload(size: size / 3, seed: UInt64(seed) + 1)]
            for body in bodies { _ = try? harness.submit(from: .a, body) }
            #expect(harness.run { $0.delivered[1].count == 2 && $0.endpoints[0].isSendIdle })
            #expect(harness.delivered[1].map(\.body) == bodies, "size \(size) seed \(seed) P \(packetSize)")
        }
    }
}
