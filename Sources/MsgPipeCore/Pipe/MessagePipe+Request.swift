public import Exchange
import Transport

extension MessagePipe {
    /// Sends request `id` and returns the peer's response, sealed with ``Options/keys``. A drop meanwhile is
    /// reconnected and resumed. Retry with the same `id` after an error: a server with a journal runs it once.
    /// Throws `TransportError` on timeout, ``MessagePipeError/linkLost(attempts:)``, a `SecureError`,
    /// `ExchangeError.malformedEnvelope`, or ``MessagePipeError/closed`` on a plain format.
    ///
    /// ```swift
    /// let response = try await pipe.request(Array("pay 12.50".utf8), id: RequestID("order-1"), timeout: .seconds(30))
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
