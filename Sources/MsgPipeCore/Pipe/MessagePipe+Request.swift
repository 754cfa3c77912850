public import Exchange
import Transport
import Secure

extension MessagePipe {
    /// Sends request `id` and returns the peer's response, sealed with ``Options/keys``. A drop meanwhile is
    /// reconnected and resumed. Retry with the same `id` after an error: a server with a journal runs it once.
    /// Throws `TransportError` on timeout, ``MessagePipeError/linkLost(attempts:)``,
    /// ``MessagePipeError/peerSessionReset(maybeDelivered:)`` (the peer forgot the secure session), a `SecureError`,
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
            throw pipeError(error)
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

/// What stopped a request (``MessagePipe/request(_:id:timeout:)``, with connecting through
/// ``MessagePipe/within(_:connect:run:)``), in the terms a caller decides on: retry with the same id, fix the
/// keys, or give up. `msgpipe request`'s exit codes follow it.
///
/// ```swift
/// do { response = try await pipe.request(body, id: id, timeout: .seconds(30)) }
/// catch where RequestFailureKind(error) == .timedOut { /* the command may still run: retry with `id` */ }
/// ```
public enum RequestFailureKind: Sendable, Equatable {
    /// The peer does not accept our key, holds another one, or wants other keys: nothing ran.
    case notAuthenticated
    /// The server refused the request without running it (replayed, tampered, too large, id reused).
    case refused
    /// The link could not be set up (ATT and Bluetooth errors while connecting too) or dropped for good.
    case link
    /// No response in time, or the server restarted with the request on its way: the command may still run, and a
    /// retry with the same id never runs it twice.
    case timedOut
    /// Anything else: a protocol error, a malformed envelope.
    case other

    /// The kind of `error`, as thrown by connecting, the handshake or the request.
    public init(_ error: any Error) {
        switch error {
        case let error as SecureError:
            switch error {
            case .notAuthenticated, .modeMismatch, .refusedByPeer(.notAuthenticated), .refusedByPeer(.modeMismatch):
                self = .notAuthenticated
            case .refusedByPeer: self = .refused
            case .closedDuringHandshake: self = .link
            default: self = .other
            }
        case let error as TransportError:
            switch error {
            case .responseTimedOut, .deadlineExceeded: self = .timedOut
            case .retriesExhausted, .linkStalled, .link, .closed, .packetSizeTooSmall: self = .link
            default: self = .other
            }
        case let error as MessagePipeError:
            switch error {
            case .notAuthenticated: self = .notAuthenticated
            // The server restarted with the request on its way: no answer; a retry with the same id runs it once.
            case .timedOut, .noResponse, .peerSessionReset: self = .timedOut
            default: self = .link
            }
        case is ExchangeError: self = .other
        default: self = .link
        }
    }
}
