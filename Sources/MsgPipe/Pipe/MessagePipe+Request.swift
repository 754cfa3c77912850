public import Exchange
import Transport

extension MessagePipe {
    /// Sends `body` as request `id` and returns the peer's response (whatever its `status`),
    /// sealed when the pipe has ``Options/keys``. A link that drops meanwhile is reconnected and Transport
    /// resumes: the request reaches the peer once and its response comes back once. After a timeout or a lost
    /// pipe, retry with the same `id` (on a new pipe if need be): a server keeping a journal
    /// (``PipeServer/serveRequests(journal:limits:idleTimeout:handler:)``) answers it from there and runs
    /// nothing twice.
    ///
    /// Throws `TransportError.responseTimedOut` (or `.deadlineExceeded`) after `timeout`,
    /// ``MessagePipeError/linkLost(attempts:)`` when reconnecting gave up, a `SecureError` when the peer
    /// refused the sealed request, `ExchangeError.malformedEnvelope` when the answer is no response to
    /// `id`, and ``MessagePipeError/closed`` on a plain format, which carries no requests.
    ///
    /// ```swift
    /// let pipe = try await MessagePipe.connect(to: "till", options: options)
    /// let response = try await pipe.request(Array("pay 12.50".utf8), id: RequestID("order-1"), timeout: .seconds(30))
    /// if response.status == .ok { print(String(decoding: response.body, as: UTF8.self)) }
    /// ```
    public func request(_ body: [UInt8], id: RequestID = .random(), timeout: Duration) async throws -> ResponseEnvelope {
        guard let transport else { throw MessagePipeError.closed }
        do {
            if let secured {
                return try await ExchangeClient.request(body, id: id, over: secured.channel, timeout: timeout)
            }
            return try await ExchangeClient.request(body, id: id, over: transport, timeout: timeout)
        } catch {
            throw linkLostIfGivenUp(error)
        }
    }
}
