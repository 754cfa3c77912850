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

extension MessagePipe {
    /// Connects with `connect`, runs `body` on the pipe and closes it, all within `timeout` (connecting, the
    /// handshake, the peer's work, its answer): a one-shot exchange that must not hang. The pipe reconnects
    /// and resumes after a drop meanwhile, as always. Past `timeout` the pipe is closed, which ends `body`,
    /// and ``MessagePipeError/noResponse(seconds:)`` is thrown (retry a request with the same id); what
    /// `connect` or `body` throws first passes through.
    ///
    /// ```swift
    /// let response = try await MessagePipe.within(.seconds(30)) {
    ///     try await MessagePipe.connect(to: "till", options: options)
    /// } run: { pipe in
    ///     try await pipe.request(Array("pay 12.50".utf8), id: RequestID("order-1"), timeout: .seconds(30))
    /// }
    /// ```
    public static func within<T: Sendable>(
        _ timeout: Duration, connect: @escaping @Sendable () async throws -> MessagePipe,
        run body: @escaping @Sendable (MessagePipe) async throws -> T
    ) async throws -> T {
        let (whole, fraction) = timeout.components
        let deadlinePassed = MessagePipeError.noResponse(seconds: Double(whole) + Double(fraction) / 1e18)
        let opened = OpenedPipe()
        do {
            let value = try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask {
                    let pipe = try await connect()
                    guard await opened.hold(pipe) else { throw deadlinePassed }
                    return try await body(pipe)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                if let result = try await group.next(), let value = result { return value }
                await opened.close()  // ends `body`, which the group waits for
                throw deadlinePassed
            }
            await opened.close()
            return value
        } catch {
            await opened.close()
            throw error
        }
    }
}

/// The pipe of ``MessagePipe/within(_:connect:run:)`` once connected, so the deadline can close it; closed
/// once, by whoever comes last.
private actor OpenedPipe {
    private var pipe: MessagePipe?
    private var closed = false

    /// Keeps `pipe`; false (and `pipe` closed) when the deadline closed the holder already.
    func hold(_ pipe: MessagePipe) async -> Bool {
        guard !closed else {
            await pipe.close()
            return false
        }
        self.pipe = pipe
        return true
    }

    func close() async {
        closed = true
        await pipe?.close()
        pipe = nil
    }
}
