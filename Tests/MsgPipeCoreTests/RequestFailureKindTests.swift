import MsgPipeCore
import Testing
import Transport

/// `RequestFailureKind`: what a requester decides on (retry with the same id, fix the keys, give up) from
/// what connecting, the handshake or the request threw.
@Suite struct RequestFailureKindTests {
    struct Unknown: Error {}

    @Test("each error a request can end with has its kind")
    func kinds() {
        let cases: [(any Error, RequestFailureKind)] = [
            (SecureError.notAuthenticated("key"), .notAuthenticated),
            (SecureError.modeMismatch(local: .preSharedKey, peer: .identity), .notAuthenticated),
            (SecureError.refusedByPeer(.notAuthenticated), .notAuthenticated),
            (SecureError.refusedByPeer(.modeMismatch), .notAuthenticated),
            (SecureError.refusedByPeer(.replayed), .refused),
            (SecureError.refusedByPeer(.tooLarge), .refused),
            (SecureError.closedDuringHandshake, .link),
            (SecureError.tampered(counter: 3), .other),
            (TransportError.responseTimedOut(requestID: 1), .timedOut),
            (TransportError.deadlineExceeded(messageID: 1), .timedOut),
            (TransportError.retriesExhausted(messageID: 1, retries: 5), .link),
            (TransportError.linkStalled(timeouts: 3), .link),
            (TransportError.closed, .link),
            (TransportError.packetSizeTooSmall(size: 1, minimum: 5), .link),
            (TransportError.messageTooLarge(size: 9, limit: 8), .other),
            (MessagePipeError.notAuthenticated("key"), .notAuthenticated),
            (MessagePipeError.timedOut, .timedOut),
            (MessagePipeError.noResponse(seconds: 30), .timedOut),
            (MessagePipeError.linkLost(attempts: 5), .link),
            (MessagePipeError.closed, .link),
            (ExchangeError.malformedEnvelope("short"), .other),
            (Unknown(), .link),
        ]
        for (error, kind) in cases {
            #expect(RequestFailureKind(error) == kind, "\(error)")
        }
    }
}
