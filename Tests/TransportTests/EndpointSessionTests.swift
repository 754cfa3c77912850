import Testing
@testable import Transport

/// PROTOCOL.md 3.9: sender sessions. A sender process that dies mid-message is replaced by a new process
/// whose ids start at 1 again; a receiver that restarts meets a sender whose ids do not.
@Suite struct EndpointSessionTests {
    /// Runs `harness` until side b holds part of a message from a, then cuts the link as a killed process would.
    private func cutMidMessage(_ harness: inout EndpointHarness) {
        #expect(harness.run { $0.endpoints[1].receiverBufferedBytes > 0 && $0.packetsSent[0] > 50 })
        harness.arrivals.removeAll()
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
    }

    private func reconnect(_ harness: inout EndpointHarness) {
        for index in 0 ..< 2 { harness.endpoints[index].linkConnected(maximumPacketSize: harness.packetSize, now: harness.now) }
    }

    @Test func newSenderSessionDropsTheAbandonedPartialMessageAndDeliversItsOwnOnce() throws {
        var harness = EndpointHarness(packetSize: 20)
        try harness.submit(from: .a, payload(size: 20_000, seed: 1))
        cutMidMessage(&harness)
        // A new sender process: a fresh endpoint, ids from 1 again, the same message sent again.
        harness.endpoints[0] = TransportEndpoint(session: 0xD00D)
        reconnect(&harness)
        let again = payload(size: 20_000, seed: 1)
        try harness.submit(from: .a, again)
        try harness.submit(from: .a, payload(size: 30, seed: 2))
        #expect(harness.run { $0.delivered[1].count == 2 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.messageID) == [1, 2])
        #expect(harness.delivered[1].first?.body == again)
        #expect(harness.endpoints[1].receiverBufferedBytes == 0, "the abandoned partial message leaked")
        #expect(harness.events[1].contains(.receiveFailed(.senderSessionEnded(messageID: 1, length: 20_000))))
    }

    @Test func restartedReceiverTakesTheSendersNextIdsInsteadOfWaitingForOnesItNeverSees() throws {
        var harness = EndpointHarness(packetSize: 20)
        try harness.submit(from: .a, payload(size: 100, seed: 3))
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        harness.endpoints[1] = TransportEndpoint(session: 0xBEEF)
        harness.delivered[1].removeAll()
        reconnect(&harness)
        let next = payload(size: 500, seed: 4)
        try harness.submit(from: .a, next)
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.messageID) == [2])
        #expect(harness.delivered[1].first?.body == next)
    }

    @Test("a receiver that restarted greets with another session: the sender's side reports it once; a resume reports none")
    func aChangedPeerSessionIsReportedOnce() throws {
        func changes(_ harness: EndpointHarness) -> [EndpointEvent] {
            harness.events[0].filter { if case .peerSessionChanged = $0 { true } else { false } }
        }
        var harness = EndpointHarness(packetSize: 20)
        try harness.submit(from: .a, payload(size: 100, seed: 3))
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        let first = try #require(harness.endpoints[0].peerSession, "the receiver's hello names its session")
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        reconnect(&harness)
        try harness.submit(from: .a, payload(size: 100, seed: 4))
        #expect(harness.run { $0.delivered[1].count == 2 && $0.endpoints[0].isSendIdle })
        #expect(changes(harness).isEmpty, "the same peer session resumed")
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        harness.endpoints[1] = TransportEndpoint(session: 0xBEEF)
        reconnect(&harness)
        try harness.submit(from: .a, payload(size: 100, seed: 5))
        #expect(harness.run { $0.delivered[1].count == 3 && $0.endpoints[0].isSendIdle })
        #expect(changes(harness) == [.peerSessionChanged(previous: first, current: 0xBEEF)])
        #expect(harness.endpoints[0].peerSession == 0xBEEF)
    }

    @Test func sameSessionReconnectingResumesItsPartialMessage() throws {
        var harness = EndpointHarness(packetSize: 20)
        let body = payload(size: 20_000, seed: 5)
        try harness.submit(from: .a, body)
        cutMidMessage(&harness)
        let sentBefore = harness.packetsSent[0]
        reconnect(&harness)
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.body) == [body])
        #expect(!harness.events[1].contains { if case .receiveFailed = $0 { true } else { false } })
        // Resumed, not restarted: the whole message takes about 1 100 packets at P = 20.
        #expect(harness.packetsSent[0] - sentBefore < 1_100)
    }

    @Test func helloGoesFirstAndIsResentUntilWelcomed() throws {
        var endpoint = TransportEndpoint(session: 7)
        endpoint.linkConnected(maximumPacketSize: 20, now: .zero)
        _ = try endpoint.submit([1, 2, 3], now: .zero)
        var buffer: [UInt8] = []
        #expect(endpoint.writeNextPacket(into: &buffer, now: .zero))
        #expect(TransportControl(decoding: buffer[...]) == .hello(session: 7, firstMessageID: 1))
        #expect(endpoint.writeNextPacket(into: &buffer, now: .zero))
        #expect(buffer.starts(with: [0xC0, 0x10]), "expected the message's Start packet right after the hello")
        // No welcome (a welcome for another session does not count): the hello goes again on its timer.
        TransportControl.welcome(session: 8).encode(into: &buffer)
        endpoint.receive(buffer[...], now: .zero)
        let timeout = try #require(endpoint.nextTimeout)
        endpoint.handleTimeout(now: timeout)
        var sent: [TransportControl] = []
        while endpoint.writeNextPacket(into: &buffer, now: timeout) {
            if let control = TransportControl(decoding: buffer[...]) { sent.append(control) }
        }
        #expect(sent.contains(.hello(session: 7, firstMessageID: 1)))
        // Welcomed: no more hellos.
        TransportControl.welcome(session: 7).encode(into: &buffer)
        endpoint.receive(buffer[...], now: timeout)
        let later = timeout + .seconds(10)
        endpoint.handleTimeout(now: later)
        sent.removeAll()
        while endpoint.writeNextPacket(into: &buffer, now: later) {
            if let control = TransportControl(decoding: buffer[...]) { sent.append(control) }
        }
        #expect(!sent.contains { if case .hello = $0 { true } else { false } })
    }

    @Test func dataOnAConnectionWithoutHelloIsIgnored() throws {
        var sender = TransportEndpoint(session: 3)
        var receiver = TransportEndpoint(session: 4)
        sender.linkConnected(maximumPacketSize: 20, now: .zero)
        receiver.linkConnected(maximumPacketSize: 20, now: .zero)
        _ = try sender.submit(Array("hi".utf8), now: .zero)
        var buffer: [UInt8] = []
        var packets: [[UInt8]] = []
        while sender.writeNextPacket(into: &buffer, now: .zero) { packets.append(buffer) }
        #expect(packets.count == 2)
        // The hello was lost: the Start alone is not taken (it might be another sender's id 1).
        receiver.receive(packets[1][...], now: .zero)
        #expect(receiver.takeMessage() == nil)
        receiver.receive(packets[0][...], now: .zero)
        receiver.receive(packets[1][...], now: .zero)
        #expect(receiver.takeMessage()?.body == Array("hi".utf8))
    }

    @Test func receiverAnswersEveryHelloWithWelcome() {
        var endpoint = TransportEndpoint(session: 1)
        endpoint.linkConnected(maximumPacketSize: 20, now: .zero)
        var buffer: [UInt8] = []
        _ = endpoint.writeNextPacket(into: &buffer, now: .zero)  // its own hello
        for session: UInt64 in [5, 5, 6] {
            TransportControl.hello(session: session, firstMessageID: 1).encode(into: &buffer)
            endpoint.receive(buffer[...], now: .zero)
            #expect(endpoint.writeNextPacket(into: &buffer, now: .zero))
            #expect(TransportControl(decoding: buffer[...]) == .welcome(session: session))
        }
    }

    @Test("a resumed sender session (a restarted process) says its first id in the hello and goes on with its ids")
    func resumedSessionGoesOnWithItsIds() throws {
        var harness = EndpointHarness(packetSize: 20)
        harness.endpoints[0] = TransportEndpoint(session: 0xAB)
        reconnect(&harness)
        try harness.submit(from: .a, payload(size: 300, seed: 6))
        #expect(harness.run { $0.delivered[1].count == 1 && $0.endpoints[0].isSendIdle })
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        harness.endpoints[0] = TransportEndpoint(resuming: SenderSession(id: 0xAB, nextMessageID: 2))
        var buffer: [UInt8] = []
        harness.endpoints[0].linkConnected(maximumPacketSize: 20, now: harness.now)
        #expect(harness.endpoints[0].writeNextPacket(into: &buffer, now: harness.now))
        #expect(TransportControl(decoding: buffer[...]) == .hello(session: 0xAB, firstMessageID: 2))
        harness.endpoints[0].linkDisconnected(now: harness.now)
        reconnect(&harness)
        let next = payload(size: 500, seed: 7)
        try harness.submit(from: .a, next)
        #expect(harness.run { $0.delivered[1].count == 2 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.messageID) == [1, 2])
        #expect(harness.delivered[1].last?.body == next)
    }

    @Test("a receiver's cancelled for a message the sender did not cancel fails that send instead of leaving it waiting")
    func cancelledByTheReceiverFailsTheSend() throws {
        var endpoint = TransportEndpoint(session: 7)
        endpoint.linkConnected(maximumPacketSize: 20, now: .zero)
        let submission = try endpoint.submit(Array(repeating: 1, count: 100), now: .zero)
        var buffer: [UInt8] = []
        while endpoint.writeNextPacket(into: &buffer, now: .zero) {}
        for control in [TransportControl.welcome(session: 7), .cancelled(messageID: 1)] {
            control.encode(into: &buffer)
            endpoint.receive(buffer[...], now: .zero)
        }
        var events: [EndpointEvent] = []
        while let event = endpoint.pollEvent() { events.append(event) }
        #expect(events.contains(.sendFailed(submission, .abandonedAtPeer(messageID: 1))))
        #expect(endpoint.isSendIdle)
    }

    @Test("a resumed session's new process may start a message the receiver holds part of on another channel: it resumes there")
    func resumedSessionMovesAPartialMessageToItsNewChannel() throws {
        var harness = EndpointHarness(packetSize: 20)
        harness.endpoints[0] = TransportEndpoint(session: 0xC4)
        reconnect(&harness)
        let bodies = (0 ..< 3).map { payload(size: 12_000, seed: 10 + UInt64($0)) }
        for body in bodies { try harness.submit(from: .a, body) }
        // Id 1 goes on channel 0; id 2 on another one while 1's late copies may be on the way. Cut the link once
        // 1 is delivered and about 300 packets of 2 were sent.
        #expect(harness.run { $0.delivered[1].count == 1 })
        let firstDone = harness.packetsSent[0]
        #expect(harness.run { $0.packetsSent[0] > firstDone + 300 })
        harness.arrivals.removeAll()
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        let delivered = harness.delivered[1].count
        // A new process of the same session resends from the oldest undelivered id: it starts it on channel 0.
        harness.endpoints[0] = TransportEndpoint(resuming: SenderSession(id: 0xC4, nextMessageID: UInt32(delivered + 1)))
        reconnect(&harness)
        let sentBefore = harness.packetsSent[0]
        for body in bodies[delivered...] { try harness.submit(from: .a, body) }
        #expect(harness.run { $0.delivered[1].count == 3 && $0.endpoints[0].isSendIdle })
        #expect(harness.delivered[1].map(\.messageID) == [1, 2, 3])
        #expect(harness.delivered[1].map(\.body) == bodies)
        // What the receiver held is not sent again: the rest of 2 and all of 3 take about 1 000 packets at P = 20
        // (both whole would be about 1 270).
        #expect(harness.packetsSent[0] - sentBefore < 1_100, "\(harness.packetsSent[0] - sentBefore) packets")
    }
}
