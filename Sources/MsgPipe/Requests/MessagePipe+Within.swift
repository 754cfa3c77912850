public import MsgPipeCore

extension MessagePipe {
    /// `within(_:connect:run:)` connecting to `peer` as ``connect(to:options:)`` does, each step bounded by
    /// `timeout` as well as the whole: the connect timeout is at most `timeout` and the end-to-end handshake
    /// may take up to `timeout`. Throws what `within(_:connect:run:)` throws.
    ///
    /// ```swift
    /// let response = try await MessagePipe.within(.seconds(30), connectingTo: "till", options: options) { pipe in
    ///     try await pipe.request(Array("pay 12.50".utf8), id: RequestID("order-1"), timeout: .seconds(30))
    /// }
    /// ```
    public static func within<T: Sendable>(
        _ timeout: Duration, connectingTo peer: String, options given: Options,
        run body: @escaping @Sendable (MessagePipe) async throws -> T
    ) async throws -> T {
        var options = given
        options.connectTimeout = min(options.connectTimeout, timeout)
        options.handshakeTimeout = timeout
        return try await within(timeout) { [options] in try await connect(to: peer, options: options) } run: { try await body($0) }
    }
}
