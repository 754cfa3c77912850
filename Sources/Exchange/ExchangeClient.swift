public import Secure
public import Transport

/// The requesting side of an exchange over a ``SecureChannel`` or a plain Transport.
public enum ExchangeClient {
    /// Sends `body` as request `id` and returns the server's response envelope (whatever its status).
    /// Throws the channel's errors (``SecureError``, Transport's timeouts) or
    /// ``ExchangeError/malformedEnvelope(_:)`` when the answer is not a response to `id`.
    public static func request(
        _ body: [UInt8], id: RequestID, over channel: SecureChannel, timeout: Duration
    ) async throws -> ResponseEnvelope {
        try response(to: id, try await channel.request(RequestEnvelope(id: id, body: body).encoded(), timeout: timeout))
    }

    /// Sends `body` as request `id` unsealed over `transport` (a server without end-to-end keys) and returns
    /// the response envelope; throws as the channel's variant does.
    public static func request(
        _ body: [UInt8], id: RequestID, over transport: Transport, timeout: Duration
    ) async throws -> ResponseEnvelope {
        try response(to: id, try await transport.request(RequestEnvelope(id: id, body: body).encoded(), timeout: timeout))
    }

    private static func response(to id: RequestID, _ answer: [UInt8]) throws(ExchangeError) -> ResponseEnvelope {
        let response = try ResponseEnvelope(decoding: answer)
        guard response.id == id else {
            throw .malformedEnvelope("the response names request \(response.id), not \(id)")
        }
        return response
    }
}
