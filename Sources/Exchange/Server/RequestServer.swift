import Backpressure
import Crypto
public import Logging
public import Secure
public import Transport

/// Answers requests one at a time, in arrival order, also when several connections are served at once: each
/// request's body goes to the command (or the handler), its output is the response, and the journal, when
/// there is one, makes a retried id get the same response without running it again (see
/// ``RequestJournal`` for the exact guarantee).
///
/// ```swift
/// let server = try RequestServer(stateDirectory: "/var/lib/till") { body in receipt(for: body) }
/// await server.serve(channel)   // per connection, concurrently
/// ```
public actor RequestServer {
    /// What happened on a connection, for logs and `--json`.
    public enum Event: Sendable {
        case handled(HandledRequest)
        /// A message was refused by the secure layer (replayed, tampered, malformed) and counted.
        case rejected(SecureError)
    }

    private let journal: (any RequestJournal)?
    /// Runs one request's body: the command, or the handler.
    private let perform: @Sendable ([UInt8]) async -> CommandOutcome
    private let limits: ExchangeLimits
    private let logger: Logger?
    /// One command at a time across all connections, taken in arrival order (the actor alone would let a
    /// second connection's request run while the first one's command is awaited).
    private let turn = CreditPool(capacity: 1)

    /// A server running `runner` for each request, with `journal` (nil: none, every request runs the command).
    /// The runner's output is bounded by ``ExchangeLimits/maximumResponseSize``; a command that cannot start
    /// is answered as a failed one (exit code 127) whose body says why.
    ///
    /// ```swift
    /// let server = RequestServer(journal: journal, runner: runner)   // ExchangePosix: a file and a process
    /// ```
    public init(
        journal: sending (any RequestJournal)?, runner: some CommandRunning, limits: ExchangeLimits = ExchangeLimits(),
        logger: Logger? = nil
    ) {
        self.journal = journal
        let limit = limits.maximumResponseSize
        perform = { [runner] input in
            do {
                return try await runner.run(input: input, maximumOutputSize: limit)
            } catch {
                return .exited(code: 127, output: Array("\(error)".utf8))
            }
        }
        self.limits = limits
        self.logger = logger
    }

    /// A server answering each request with `handler`: what it returns is an ``ResponseStatus/ok`` response,
    /// an error it throws a ``ResponseStatus/commandFailed`` one (exit code 1) whose body is the error's
    /// description, a body over ``ExchangeLimits/maximumResponseSize`` a failed one too. With `journal` a
    /// retried id gets the recorded response without calling `handler` again; without one every request
    /// calls it. A handler still running when its task is cancelled records no response (a retry gets
    /// ``ResponseStatus/outcomeUnknown`` from a journal).
    ///
    /// ```swift
    /// let server = RequestServer(journal: nil) { body in receipt(for: body) }
    /// ```
    public init(
        journal: sending (any RequestJournal)?, limits: ExchangeLimits = ExchangeLimits(), logger: Logger? = nil,
        handler: @escaping @Sendable (_ body: [UInt8]) async throws -> [UInt8]
    ) {
        self.journal = journal
        let limit = limits.maximumResponseSize
        perform = { input in
            do {
                let output = try await handler(input)
                if Task.isCancelled { return .cancelled }
                return output.count > limit ? .outputTooLarge(limit: limit) : .exited(code: 0, output: output)
            } catch {
                if Task.isCancelled || error is CancellationError { return .cancelled }
                return .exited(code: 1, output: Array("\(error)".utf8))
            }
        }
        self.limits = limits
        self.logger = logger
    }

    /// What opening the journal repaired, if anything.
    public var journalRecoveryNote: String? { journal?.recoveryNote }

    /// Serves the requests of one connection until it closes (call it once per connection, concurrently;
    /// their commands take turns), or until no request came for `idleTimeout`
    /// (then the channel is closed, so an idle peer cannot hold this one-at-a-time server); `onEvent` sees each
    /// request and rejection.
    public func serve(
        _ channel: SecureChannel, idleTimeout: Duration? = nil, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async {
        await serve(idleTimeout: idleTimeout, onEvent: onEvent, close: { await channel.close() }) {
            do throws(SecureError) {
                let message = try await channel.receive(onRejected: { onEvent(.rejected($0)) })
                return .success(message.map { message in
                    Incoming(body: message.plaintext, isRequest: message.isRequest) {
                        try await channel.respond(to: message, with: $0)
                    }
                })
            } catch {
                return .failure(error)
            }
        }
    }

    /// Serves the requests of one plain Transport (no end-to-end keys) as `serve` serves a secure channel's.
    public func serve(
        _ transport: Transport, idleTimeout: Duration? = nil, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async {
        await serve(idleTimeout: idleTimeout, onEvent: onEvent, close: { await transport.close() }) {
            var messages = transport.messages.makeAsyncIterator()
            return .success(await messages.next().map { message in
                Incoming(body: message.body, isRequest: message.isRequest) {
                    try await transport.respond(to: message, with: $0)
                }
            })
        }
    }

    /// A message from the peer, opened, and how to answer it.
    private struct Incoming: Sendable {
        let body: [UInt8]
        let isRequest: Bool
        let respond: @Sendable ([UInt8]) async throws -> Void
    }

    private func serve(
        idleTimeout: Duration?, onEvent: @escaping @Sendable (Event) -> Void, close: @escaping @Sendable () async -> Void,
        receive: @escaping @Sendable () async -> Result<Incoming?, SecureError>
    ) async {
        while true {
            let message: Incoming?
            switch await nextMessage(idleTimeout: idleTimeout, close: close, receive: receive) {
            case let .success(next):
                message = next
            case .failure:
                continue  // reported through onRejected before the peer was told
            }
            guard let message else { return }
            guard message.isRequest else {
                logger?.warning("ignoring a message that is not a request (\(message.body.count) bytes)")
                continue
            }
            guard let (response, report) = await answer(message.body) else { return }
            do {
                try await message.respond(response)
            } catch {
                // Often the requester closed right after reading the response, before acknowledging it.
                logger?.info("response to \(report.id) not acknowledged: \(error) (a retry gets it from the journal)")
            }
            onEvent(.handled(report))
        }
    }

    private func nextMessage(
        idleTimeout: Duration?, close: @escaping @Sendable () async -> Void,
        receive: @escaping @Sendable () async -> Result<Incoming?, SecureError>
    ) async -> Result<Incoming?, SecureError> {
        guard let idleTimeout else { return await receive() }
        return await withTaskGroup(of: Result<Incoming?, SecureError>?.self) { group in
            group.addTask { await receive() }
            group.addTask {
                try? await Task.sleep(for: idleTimeout)
                return nil
            }
            defer { group.cancelAll() }
            if let first = await group.next(), let result = first { return result }
            logger?.info("no request for \(idleTimeout): closing the connection")
            await close()
            return .success(nil)
        }
    }

    /// Answers one encoded ``RequestEnvelope`` as `serve` does, in its turn (one
    /// request at a time across every caller, in arrival order): returns the encoded ``ResponseEnvelope`` for
    /// the peer and what was done. Nil when the task was cancelled while it waited for its turn or while the
    /// command or handler ran (nothing was answered nor recorded as completed).
    public func answer(_ request: [UInt8]) async -> (response: [UInt8], handled: HandledRequest)? {
        do { try await turn.acquire() } catch { return nil }
        defer { turn.release() }
        guard let (response, handled) = await handle(request) else { return nil }
        return (response.encoded(), handled)
    }

    /// Handles one encoded ``RequestEnvelope``; nil when the task was cancelled while the command ran
    /// (serve is stopping: the command was killed and no response is recorded).
    public func handle(_ bytes: [UInt8]) async -> (ResponseEnvelope, HandledRequest)? {
        let request: RequestEnvelope
        do {
            request = try RequestEnvelope(decoding: bytes)
        } catch {
            return refuse(id: nil, "\(error)", requestBytes: bytes.count)
        }
        guard request.body.count <= limits.maximumRequestSize else {
            return refuse(
                id: request.id, "\(ExchangeError.bodyTooLarge(size: request.body.count, limit: limits.maximumRequestSize))",
                requestBytes: request.body.count)
        }
        let digest = Array(SHA256.hash(data: request.body))
        let known: RequestJournalEntry?
        do {
            known = try journal?.entry(for: request.id)
        } catch {
            return refuse(id: request.id, "\(error)", requestBytes: request.body.count)
        }
        switch known {
        case let .completed(recordedDigest, response)?:
            guard recordedDigest == digest else { return conflict(request) }
            logger?.info("request \(request.id) answered from the journal")
            return (response, report(response, ran: false, fromJournal: true, requestBytes: request.body.count))
        case let .started(recordedDigest)?:
            guard recordedDigest == digest else { return conflict(request) }
            let response = ResponseEnvelope(
                id: request.id, status: .outcomeUnknown,
                body: Array("serve stopped while this request's command ran; it is not run again".utf8))
            try? journal?.recordCompleted(digest: digest, response: response)
            return (response, report(response, ran: false, fromJournal: true, requestBytes: request.body.count))
        case nil:
            return await run(request, digest: digest)
        }
    }

    private func run(_ request: RequestEnvelope, digest: [UInt8]) async -> (ResponseEnvelope, HandledRequest)? {
        do {
            try journal?.recordStarted(request.id, digest: digest)
        } catch {
            return refuse(id: request.id, "\(error)", requestBytes: request.body.count)
        }
        logger?.info("running the command for request \(request.id)")
        let outcome = await perform(request.body)
        let response: ResponseEnvelope
        switch outcome {
        case let .exited(code, output):
            response = ResponseEnvelope(
                id: request.id, status: code == 0 ? .ok : .commandFailed, exitCode: UInt8(truncatingIfNeeded: code),
                body: output)
        case let .killedBySignal(signal, output):
            response = ResponseEnvelope(
                id: request.id, status: .commandFailed, exitCode: UInt8(truncatingIfNeeded: 128 + signal), body: output)
        case let .timedOut(output):
            response = ResponseEnvelope(id: request.id, status: .commandTimedOut, exitCode: 137, body: output)
        case let .outputTooLarge(limit):
            response = ResponseEnvelope(
                id: request.id, status: .commandFailed, exitCode: 137,
                body: Array("the command's output passed the limit of \(limit) bytes".utf8))
        case .cancelled:
            logger?.warning("request \(request.id): command killed, serve is stopping (a retry gets outcome-unknown)")
            return nil
        }
        do {
            try journal?.recordCompleted(digest: digest, response: response)
        } catch {
            logger?.error("request \(request.id): response not recorded: \(error); a retry gets outcome-unknown")
        }
        return (response, report(response, ran: true, fromJournal: false, requestBytes: request.body.count))
    }

    private func conflict(_ request: RequestEnvelope) -> (ResponseEnvelope, HandledRequest) {
        refuse(id: request.id, "request id \(request.id) was already used for a different request",
               requestBytes: request.body.count)
    }

    private func refuse(id: RequestID?, _ reason: String, requestBytes: Int) -> (ResponseEnvelope, HandledRequest) {
        logger?.warning("request refused: \(reason)")
        // "-" is a valid id, so this cannot fail.
        let response = ResponseEnvelope(
            id: id ?? (try! RequestID("-")), status: .refused, body: Array(reason.utf8))
        var handled = report(response, ran: false, fromJournal: false, requestBytes: requestBytes)
        handled.note = reason
        return (response, handled)
    }

    private func report(
        _ response: ResponseEnvelope, ran: Bool, fromJournal: Bool, requestBytes: Int
    ) -> HandledRequest {
        HandledRequest(
            id: response.id.value, status: response.status, exitCode: response.exitCode, ranCommand: ran,
            fromJournal: fromJournal, requestBytes: requestBytes, responseBytes: response.body.count,
            note: response.status == .ok ? nil : String(decoding: response.body.prefix(200), as: UTF8.self))
    }
}
