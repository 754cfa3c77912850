import MemoryLinks
import TestSupport
import Testing
import Transport

/// `EndpointConfiguration.holdsAcknowledgements`: a delivered message is acknowledged (`complete`) only once
/// the receiving application accepted it; until then the sender waits without failing, and a receiver that
/// goes away unaccepted leaves the message to be delivered again.
@Suite struct EndpointHeldAcknowledgementTests {
    private static var holding: EndpointConfiguration {
        var configuration = EndpointConfiguration()
        configuration.holdsAcknowledgements = true
        return configuration
    }

    private func completed(_ harness: EndpointHarness) -> [UInt32] {
        harness.events[0].compactMap { if case let .sendCompleted(_, id) = $0 { id } else { nil } }
    }

    private func failed(_ harness: EndpointHarness) -> Bool {
        harness.events[0].contains { if case .sendFailed = $0 { true } else { false } }
    }

    @Test func anUnacceptedMessageIsNotAcknowledgedAndTheSenderWaitsWithoutFailing() throws {
        var harness = EndpointHarness(packetSize: 20, configuration: Self.holding)
        try harness.submit(from: .a, payload(size: 3_000, seed: 1))
        #expect(harness.run { $0.delivered[1].count == 1 })
        // Far beyond the sender's 10 retransmission timeouts: it is parked, not failing.
        _ = harness.run(for: .seconds(120)) { _ in false }
        #expect(completed(harness).isEmpty)
        #expect(!failed(harness))
        #expect(!harness.endpoints[0].isSendIdle)
        #expect(harness.endpoints[1].messagesAwaitingAcceptance == 1)
        #expect(harness.delivered[1].count == 1)
    }

    @Test func acceptingTheMessageCompletesTheSendAtOnce() throws {
        var harness = EndpointHarness(packetSize: 20, configuration: Self.holding)
        try harness.submit(from: .a, payload(size: 3_000, seed: 2))
        #expect(harness.run { $0.delivered[1].count == 1 })
        _ = harness.run(for: .seconds(3)) { _ in false }
        let acceptedAt = harness.now
        harness.endpoints[1].accept(harness.delivered[1][0])
        #expect(harness.run(for: .seconds(5)) { completed($0) == [1] && $0.endpoints[0].isSendIdle })
        // The complete goes out with the next packet: one link latency, not a probe interval.
        #expect(harness.now - acceptedAt < .milliseconds(50))
        #expect(harness.endpoints[1].receiverBufferedBytes == 0)
        #expect(harness.endpoints[1].messagesAwaitingAcceptance == 0)
    }

    /// A server that answers a request before it accepts it: the requester, parked by `busy` meanwhile (its
    /// retransmission timeout asked first), takes the response at once instead of waiting to its deadline.
    @Test func aResponseSettlesARequestParkedByBusy() throws {
        var harness = EndpointHarness(packetSize: 20, configuration: Self.holding)
        let request = try harness.submit(from: .a, Array("client hello".utf8), options: SendOptions(kind: .request, deadline: .seconds(60)))
        #expect(harness.run { $0.delivered[1].count == 1 })
        // Long enough for a's timeout to query and b to answer busy: a parks the request.
        _ = harness.run(for: .seconds(3)) { _ in false }
        #expect(completed(harness).isEmpty)
        let received = harness.delivered[1][0]
        try harness.submit(from: .b, Array("server hello".utf8), options: SendOptions(kind: .response(to: received.messageID)))
        let answered = harness.now
        #expect(harness.run(for: .seconds(5)) { $0.events[0].contains { if case .responseReceived = $0 { true } else { false } } })
        #expect(harness.now - answered < .seconds(1), "the response settles the parked request on arrival")
        #expect(harness.events[0].contains(.responseReceived(request, ReceivedMessage(messageID: 1, body: Array("server hello".utf8), correlationID: 1))))
        #expect(completed(harness) == [1])
        // The complete that follows the late accept changes nothing.
        harness.endpoints[1].accept(received)
        _ = harness.run(for: .seconds(2)) { _ in false }
        #expect(!failed(harness))
        #expect(harness.endpoints[0].isSendIdle)
    }

    @Test func aRejectedMessageFailsTheSendWithTheReasonAndIsNeverAcknowledged() throws {
        var harness = EndpointHarness(packetSize: 20, configuration: Self.holding)
        try harness.submit(from: .a, payload(size: 3_000, seed: 4))
        #expect(harness.run { $0.delivered[1].count == 1 })
        harness.endpoints[1].reject(harness.delivered[1][0], reason: .notAuthenticated)
        #expect(harness.run(for: .seconds(5)) { failed($0) })
        let reasons = harness.events[0].compactMap { event -> TransportError? in
            if case let .sendFailed(_, error) = event { error } else { nil }
        }
        #expect(reasons == [.rejectedByPeer(messageID: 1, reason: .notAuthenticated)])
        #expect(completed(harness).isEmpty)
        #expect(harness.endpoints[1].messagesAwaitingAcceptance == 0)
        #expect(harness.endpoints[1].receiverBufferedBytes == 0)
        // Accepting it afterwards changes nothing: it left the books.
        harness.endpoints[1].accept(harness.delivered[1][0])
        _ = harness.run(for: .seconds(2)) { _ in false }
        #expect(completed(harness).isEmpty)
    }

    @Test func heldMessagesStayWithinTheReceiversLimitsAndAllCompleteOnceAccepted() throws {
        var configuration = Self.holding
        configuration.maximumMessagesInProgress = 4
        var harness = EndpointHarness(packetSize: 20, configuration: configuration)
        let bodies = (0 ..< 12).map { payload(size: 500 + $0, seed: UInt64(10 + $0)) }
        for body in bodies { try harness.submit(from: .a, body) }
        _ = harness.run(for: .seconds(30)) { _ in false }
        #expect(harness.endpoints[1].messagesAwaitingAcceptance <= 4)
        #expect(harness.delivered[1].count <= 4)
        #expect(completed(harness).isEmpty)
        #expect(!failed(harness))
        // The consumer accepts each message as it sees it: everything goes through, in order, once.
        var accepted = 0
        for _ in 0 ..< 200 where !harness.endpoints[0].isSendIdle || accepted < harness.delivered[1].count {
            while accepted < harness.delivered[1].count {
                harness.endpoints[1].accept(harness.delivered[1][accepted])
                accepted += 1
            }
            _ = harness.run(for: .seconds(5)) { $0.delivered[1].count > accepted || $0.endpoints[0].isSendIdle }
        }
        #expect(harness.delivered[1].map(\.body) == bodies)
        #expect(completed(harness) == (1 ... 12).map(UInt32.init))
        #expect(!failed(harness))
    }

    @Test func aReceiverThatDiesHoldingTheMessageLeavesItToBeDeliveredAgain() throws {
        var harness = EndpointHarness(packetSize: 20, configuration: Self.holding)
        let body = payload(size: 4_000, seed: 3)
        try harness.submit(from: .a, body)
        #expect(harness.run { $0.delivered[1].count == 1 })
        _ = harness.run(for: .seconds(2)) { _ in false }
        // The receiving process dies with the message unaccepted; a new one takes the link.
        harness.arrivals.removeAll()
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        harness.endpoints[1] = TransportEndpoint(configuration: Self.holding)
        for index in 0 ..< 2 {
            harness.endpoints[index].linkConnected(maximumPacketSize: harness.packetSize, now: harness.now)
        }
        #expect(harness.run(for: .seconds(30)) { $0.delivered[1].count == 2 })
        #expect(harness.delivered[1][1].body == body)
        #expect(completed(harness).isEmpty)
        harness.endpoints[1].accept(harness.delivered[1][1])
        #expect(harness.run(for: .seconds(5)) { completed($0) == [1] })
        #expect(!failed(harness))
    }

    @Test func anAcceptanceFromAnEndedSenderSessionAcknowledgesNothingOfTheNextOne() throws {
        var harness = EndpointHarness(packetSize: 20, configuration: Self.holding)
        try harness.submit(from: .a, payload(size: 100, seed: 4))
        #expect(harness.run { $0.delivered[1].count == 1 })
        let old = harness.delivered[1][0]
        // The sender restarts (a new session, ids from 1 again) and sends another message 1.
        harness.arrivals.removeAll()
        for index in 0 ..< 2 { harness.endpoints[index].linkDisconnected(now: harness.now) }
        harness.endpoints[0] = TransportEndpoint(configuration: Self.holding, session: 0xB0B)
        harness.events[0] = []
        for index in 0 ..< 2 {
            harness.endpoints[index].linkConnected(maximumPacketSize: harness.packetSize, now: harness.now)
        }
        try harness.submit(from: .a, payload(size: 100, seed: 5))
        #expect(harness.run(for: .seconds(10)) { $0.delivered[1].count == 2 })
        #expect(harness.delivered[1][1].messageID == old.messageID)
        #expect(harness.delivered[1][1].senderSession == 0xB0B)
        harness.endpoints[1].accept(old)
        _ = harness.run(for: .seconds(3)) { _ in false }
        #expect(completed(harness).isEmpty)
        harness.endpoints[1].accept(harness.delivered[1][1])
        #expect(harness.run(for: .seconds(5)) { completed($0) == [1] })
    }

    @Test func transportSendReturnsOnlyAfterTheReceiverAccepts() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 20)
        var holding = TransportOptions.fastForTests
        holding.endpoint.holdsAcknowledgements = true
        let sender = Transport(link: left, options: TransportOptions.fastForTests)
        let receiver = Transport(link: right, options: holding)
        let body = payload(size: 2_000, seed: 6)
        let clock = ContinuousClock()
        let sending = Task {
            try await sender.send(body)
            return clock.now
        }
        var iterator = receiver.messages.makeAsyncIterator()
        let message = try #require(await iterator.next())
        #expect(message.body == body)
        try await Task.sleep(for: .milliseconds(500))
        #expect(await receiver.messagesAwaitingAcceptance == 1)
        let acceptedAt = clock.now
        await receiver.accept(message)
        let completedAt = try await sending.value
        #expect(completedAt >= acceptedAt)
        #expect(await receiver.messagesAwaitingAcceptance == 0)
        await sender.close()
        await receiver.close()
    }
}
