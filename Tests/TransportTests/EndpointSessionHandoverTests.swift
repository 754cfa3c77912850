import Testing
@testable import Transport

/// PROTOCOL.md 3.9: no control packet for a session crosses into the next connection's session. A receiver
/// holds its control packets on a connection until the sender's hello arrived (the welcome goes first); a
/// sender drops every control packet but `welcome` that arrives before its welcome.
@Suite struct EndpointSessionHandoverTests {
    private func controls(writtenBy endpoint: inout TransportEndpoint, now: Duration) -> [TransportControl] {
        var buffer: [UInt8] = []
        var sent: [TransportControl] = []
        while endpoint.writeNextPacket(into: &buffer, now: now) {
            if let control = TransportControl(decoding: buffer[...]) { sent.append(control) }
        }
        return sent
    }

    /// The failure an independent implementation found: a sender dies mid-message, the
    /// listener's delayed acknowledgement of it comes due while nobody is connected, and went out on the next
    /// connection before its hello; the next sender (a new session, its own message 1) took it for its own,
    /// never resent the segments it named, and hung once one of them was lost.
    @Test func theDeadSendersDelayedAcknowledgementDoesNotReachTheNextSender() throws {
        // 10 % loss, seed 4: before the fix, one of the segments the stale acknowledgement named was lost.
        var harness = EndpointHarness(packetSize: 20, faults: FaultProfile(loss: 0.1), seed: 4)
        try harness.submit(from: .a, payload(size: 20_000, seed: 21))
        #expect(harness.run { $0.endpoints[1].receiverBufferedBytes > 0 && $0.packetsSent[0] > 60 })
        harness.arrivals.removeAll()
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        // The listener's acknowledgement timer runs out while no sender is connected.
        let due = try #require(harness.endpoints[1].nextTimeout, "no acknowledgement pending at the cut")
        harness.now = max(harness.now, due)
        harness.endpoints[1].handleTimeout(now: harness.now)

        // A new sender process (new session, ids from 1 again) connects.
        harness.endpoints[0] = TransportEndpoint(session: 0xB0B)
        for index in 0 ..< 2 {
            harness.endpoints[index].linkConnected(maximumPacketSize: harness.packetSize, now: harness.now)
        }
        var listener = harness.endpoints[1]
        let early = controls(writtenBy: &listener, now: harness.now)
        #expect(early.allSatisfy { if case .hello = $0 { true } else { false } }, "sent before any hello: \(early)")

        let body = payload(size: 6_000, seed: 22)
        try harness.submit(from: .a, body)
        #expect(harness.run(for: .seconds(60)) { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.messageID) == [1])
        #expect(harness.delivered[1].first?.body == body)
        // Exactly once: nothing more arrives.
        _ = harness.run(for: .seconds(5)) { _ in false }
        #expect(harness.delivered[1].count == 1)
        #expect(harness.events[1].contains(.receiveFailed(.senderSessionEnded(messageID: 1, length: 20_000))))
    }

    @Test func aReceiverHoldsItsControlPacketsUntilTheHelloAndSendsTheWelcomeFirst() throws {
        var sender = TransportEndpoint(session: 1)
        var receiver = TransportEndpoint(session: 2)
        sender.linkConnected(maximumPacketSize: 20, now: .zero)
        receiver.linkConnected(maximumPacketSize: 20, now: .zero)
        _ = try sender.submit(payload(size: 400, seed: 23), now: .zero)
        var buffer: [UInt8] = []
        for _ in 0 ..< 6 {
            #expect(sender.writeNextPacket(into: &buffer, now: .zero))
            receiver.receive(buffer[...], now: .zero)
        }
        _ = controls(writtenBy: &receiver, now: .zero)  // the welcome and the receiver's own hello
        sender.linkDisconnected(now: .zero)
        receiver.linkDisconnected(now: .zero)
        let due = try #require(receiver.nextTimeout)
        receiver.handleTimeout(now: due)
        receiver.linkConnected(maximumPacketSize: 20, now: due)
        #expect(controls(writtenBy: &receiver, now: due) == [.hello(session: 2, firstMessageID: 1)])
        // The same sender reconnects: its hello is answered first, then the held acknowledgement goes.
        TransportControl.hello(session: 1, firstMessageID: 1).encode(into: &buffer)
        receiver.receive(buffer[...], now: due)
        let answers = controls(writtenBy: &receiver, now: due)
        #expect(answers.first == .welcome(session: 1))
        #expect(answers.contains { if case .acknowledgement = $0 { true } else { false } })
    }

    @Test func aSenderDropsControlPacketsThatArriveBeforeItsWelcome() throws {
        var endpoint = TransportEndpoint(session: 9)
        endpoint.linkConnected(maximumPacketSize: 20, now: .zero)
        let submission = try endpoint.submit(Array("hi".utf8), now: .zero)
        var buffer: [UInt8] = []
        while endpoint.writeNextPacket(into: &buffer, now: .zero) {}  // the hello and message 1
        // Another session's answers for "its" message 1: ignored before the welcome.
        for control in [
            TransportControl.acknowledgement(Acknowledgement(messageID: 1, cumulative: 1, bitmapStart: 2, bitmap: [])),
            .complete(messageID: 1), .rejected(messageID: 1, reason: .tooLarge),
        ] {
            control.encode(into: &buffer)
            endpoint.receive(buffer[...], now: .zero)
        }
        #expect(endpoint.pollEvent() == nil)
        #expect(!endpoint.isSendIdle)
        TransportControl.welcome(session: 9).encode(into: &buffer)
        endpoint.receive(buffer[...], now: .zero)
        TransportControl.complete(messageID: 1).encode(into: &buffer)
        endpoint.receive(buffer[...], now: .zero)
        #expect(endpoint.pollEvent() == .sendCompleted(submission, messageID: 1))
    }
}
