import MemoryLinks
import MsgPipeCore
import TestSupport
import Testing
import Transport

/// `PeerDelivery.Failure.kind`: what a caller decides on (msgpipe's exit codes) from what stopped a peer.
@Suite struct DeliveryFailureKindTests {
    struct Unreadable: Error {}

    @Test("while sending: a timeout is not acknowledged, a rejection refused, an unusable packet size unsendable")
    func sendingFailures() {
        let cases: [(any Error, PeerDelivery.Failure.Kind)] = [
            (TransportError.deadlineExceeded(messageID: 1), .notAcknowledged),
            (TransportError.linkStalled(timeouts: 3), .notAcknowledged),
            (MessagePipeError.timedOut, .notAcknowledged),
            (TransportError.rejectedByPeer(messageID: 1, reason: .tooLarge), .refused),
            (TransportError.rejectedByPeer(messageID: 1, reason: .notAuthenticated), .notAuthenticated),
            (TransportError.messageTooLarge(size: 9, limit: 8), .refused),
            (MessagePipeError.formatMismatch(.legacy), .refused),
            (MessagePipeError.notAuthenticated("key"), .notAuthenticated),
            (SecureError.notAuthenticated("key"), .notAuthenticated),
            (SecureError.closedDuringHandshake, .link),
            (TransportError.packetSizeTooSmall(size: 1, minimum: 5), .unsendable),
            (TransportError.closed, .link),
            (MessagePipeError.linkLost(attempts: 5), .link),
            (Unreadable(), .link),
        ]
        for (error, kind) in cases {
            #expect(PeerDelivery.Failure.send(.send(index: 0, error: error)).kind == kind, "\(error)")
        }
        #expect(PeerDelivery.Failure.send(.body(index: 0, error: Unreadable())).kind == .body)
    }

    @Test("while connecting: a pipe's or a handshake's error is a refusal (nothing was sent), anything else the link")
    func connectingFailures() {
        #expect(PeerDelivery.Failure.connect(MessagePipeError.linkLost(attempts: 5)).kind == .refused)
        #expect(PeerDelivery.Failure.connect(MessagePipeError.notAuthenticated("key")).kind == .notAuthenticated)
        #expect(PeerDelivery.Failure.connect(SecureError.modeMismatch(local: .preSharedKey, peer: .identity)).kind == .notAuthenticated)
        #expect(PeerDelivery.Failure.connect(SecureError.closedDuringHandshake).kind == .link)
        #expect(PeerDelivery.Failure.connect(LinkError.notConnected).kind == .link)
    }

    @Test("a body that throws stops that peer with kind body, after what was acknowledged before it")
    func aThrowingBodyIsKindBody() async throws {
        let stack = MemoryStack()
        let server = try await MessagePipe.serve(at: "door", over: stack, options: .patientForTests)
        let reading = Task { await DeliveryTests.received(by: server, centrals: 1, messages: 1) }
        let outcome = await MessagePipe.send(count: 2, toEach: ["door"], over: stack) { index in
            guard index == 0 else { throw Unreadable() }
            return [1, 2, 3]
        }
        #expect(outcome.deliveries.map(\.acknowledged) == [1])
        #expect(outcome.deliveries[0].failure?.kind == .body)
        #expect(await reading.value == [[[1, 2, 3]]])
        await server.close()
    }
}
