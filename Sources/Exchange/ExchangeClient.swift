public import Secure

/// The requesting side of an exchange over a ``SecureChannel``.
public enum ExchangeClient {
    /// Sends `body` as request `id` and returns the server's response envelope (whatever its status).
    /// Throws the channel's errors (``SecureError``, Transport's timeouts) or
    /// ``ExchangeError/malformedEnvelope(_:)`` when the answer is not a response to `id`.
    public static func request(
        _ body: [UInt8], id: RequestID, over channel: SecureChannel, timeout: Duration
    ) async throws -> ResponseEnvelope {
        let answer = try await channel.request(RequestEnvelope(id: id, body: body).encoded(), timeout: timeout)
        let response = try ResponseEnvelope(decoding: answer)
        guard response.id == id else {
            throw ExchangeError.malformedEnvelope("the response names request \(response.id), not \(id)")
        }
        return response
    }
}
