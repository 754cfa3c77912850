import Backpressure
import Crypto
public import Logging
public import Secure

/// Answers requests one at a time, in arrival order (the seeds' command queue), also when several
/// connections are served at once: each request's body goes to
/// the command, the command's output is the response, and the journal makes a retried id get the same
/// response without running the command again (see ``IdempotencyJournal`` for the exact guarantee).
public actor RequestServer {
    /// What happened on a connection, for logs and `--json`.
    public enum Event: Sendable {
        case handled(HandledRequest)
        /// A message was refused by the secure layer (replayed, tampered, malformed) and counted.
        case rejected(SecureError)
    }

    private let journal: IdempotencyJournal
    private let runner: CommandRunner
    private let limits: ExchangeLimits
    private let logger: Logger?
    /// One command at a time across all connections, taken in arrival order (the actor alone would let a
    /// second connection's request run while the first one's command is awaited).
    private let turn = CreditPool(capacity: 1)

    /// A server keeping its journal in `stateDirectory` (created if missing; one server per directory).
    public init(
        stateDirectory: String, runner: CommandRunner, limits: ExchangeLimits = ExchangeLimits(),
        logger: Logger? = nil
    ) throws(ExchangeError) {
        journal = try IdempotencyJournal(directory: stateDirectory, limits: limits, logger: logger)
        var runner = runner
        runner.maximumOutputSize = limits.maximumResponseSize
        self.runner = runner
        self.limits = limits
        self.logger = logger
    }

    /// What opening the journal repaired, if anything.
    public var journalRecoveryNote: String? { journal.recoveryNote }

    /// Serves the requests of one connection until it closes (call it once per connection, concurrently;
    /// their commands take turns), or until no request came for `idleTimeout`
    /// (then the channel is closed, so an idle peer cannot hold this one-at-a-time server); `onEvent` sees each
    /// request and rejection.
    public func serve(
        _ channel: SecureChannel, idleTimeout: Duration? = nil, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async {
        while true {
            let message: SecureMessage?
            switch await nextMessage(channel, idleTimeout: idleTimeout, onRejected: { onEvent(.rejected($0)) }) {
            case let .success(next):
                message = next
            case .failure:
                continue  // reported through onRejected before the peer was told
            }
            guard let message else { return }
            guard message.isRequest else {
                logger?.warning("ignoring a message that is not a request (\(message.plaintext.count) bytes)")
                continue
            }
            do { try await turn.acquire() } catch { return }
            let handled = await handle(message.plaintext)
            turn.release()
            guard let (response, report) = handled else { return }
            do {
                try await channel.respond(to: message, with: response.encoded())
            } catch {
                // Often the requester closed right after reading the response, before acknowledging it.
                logger?.info("response to \(report.id) not acknowledged: \(error) (a retry gets it from the journal)")
            }
            onEvent(.handled(report))
        }
    }

    private func nextMessage(
        _ channel: SecureChannel, idleTimeout: Duration?, onRejected: @escaping @Sendable (SecureError) -> Void
    ) async -> Result<SecureMessage?, SecureError> {
        let receive: @Sendable () async -> Result<SecureMessage?, SecureError> = {
            do throws(SecureError) {
                return .success(try await channel.receive(onRejected: onRejected))
            } catch {
                return .failure(error)
            }
        }
        guard let idleTimeout else { return await receive() }
        return await withTaskGroup(of: Result<SecureMessage?, SecureError>?.self) { group in
            group.addTask { await receive() }
            group.addTask {
                try? await Task.sleep(for: idleTimeout)
                return nil
            }
            defer { group.cancelAll() }
            if let first = await group.next(), let result = first { return result }
            logger?.info("no request for \(idleTimeout): closing the connection")
            await channel.close()
            return .success(nil)
        }
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
        let known: IdempotencyJournal.Entry?
        do {
            known = try journal.entry(for: request.id)
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
            try? journal.recordCompleted(digest: digest, response: response)
            return (response, report(response, ran: false, fromJournal: true, requestBytes: request.body.count))
        case nil:
            return await run(request, digest: digest)
        }
    }

    private func run(_ request: RequestEnvelope, digest: [UInt8]) async -> (ResponseEnvelope, HandledRequest)? {
        do {
            try journal.recordStarted(request.id, digest: digest)
        } catch {
            return refuse(id: request.id, "\(error)", requestBytes: request.body.count)
        }
        logger?.info("running the command for request \(request.id)")
        let outcome: CommandOutcome
        do {
            outcome = try await runner.run(input: request.body)
        } catch {
            outcome = .exited(code: 127, output: Array("\(error)".utf8))
        }
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
            try journal.recordCompleted(digest: digest, response: response)
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
