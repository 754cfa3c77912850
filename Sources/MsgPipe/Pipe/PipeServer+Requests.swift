public import Exchange
import Synchronization

extension PipeServer {
    /// Answers every central's requests with `server` until this server is closed or has served its
    /// connections, then returns: each central on ``centrals`` is served in a child task (see
    /// ``MessagePipe/serveRequests(with:idleTimeout:onEvent:)``), their handlers take turns in arrival order.
    /// A central that reconnects resumes its session and gets the response of a request it sent before the
    /// drop. Cancelling the calling task closes the server: a handler that runs is cancelled (a command's
    /// process group is killed) and records no response. msgpipe format; with ``MessagePipe/Options/keys`` only
    /// centrals that passed the handshake are served, their requests and responses sealed.
    ///
    /// ```swift
    /// let server = try await MessagePipe.listen(path: "/run/till.sock", options: options)
    /// let answers = try RequestServer(stateDirectory: "/var/lib/till") { body in receipt(for: body) }
    /// await server.serveRequests(with: answers)
    /// ```
    public func serveRequests(
        with server: RequestServer, idleTimeout: Duration? = nil,
        onEvent: @escaping @Sendable (RequestServer.Event) -> Void = { _ in }
    ) async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await central in centrals {
                    group.addTask { await central.serveRequests(with: server, idleTimeout: idleTimeout, onEvent: onEvent) }
                }
            }
        } onCancel: {
            Task { await self.close() }
        }
    }

    /// Answers every central's requests with `handler` as ``serveRequests(with:idleTimeout:onEvent:)`` does: what
    /// it returns is the response, an error it throws a failed response carrying its description. With
    /// `journal`, a directory (created if missing; one server per directory), a request retried with the same id
    /// (after a timeout, a lost link, a restart of either side) gets the recorded response and `handler` never
    /// runs twice for it. Throws `ExchangeError` when the journal cannot be opened.
    ///
    /// ```swift
    /// let server = try await MessagePipe.advertise(name: "till", options: options)
    /// try await server.serveRequests(journal: "/var/lib/till") { body in receipt(for: body) }
    /// ```
    public func serveRequests(
        journal: String? = nil, limits: ExchangeLimits = ExchangeLimits(), idleTimeout: Duration? = nil,
        handler: @escaping @Sendable (_ body: [UInt8]) async throws -> [UInt8]
    ) async throws(ExchangeError) {
        let server = try RequestServer(stateDirectory: journal, limits: limits, handler: handler)
        await serveRequests(with: server, idleTimeout: idleTimeout)
    }
}

extension MessagePipe {
    /// Answers this pipe's requests (``PipeMessage/isRequest``) with `server`, one after the other, until the
    /// pipe ends, then closes it; other messages are taken and dropped. After `idleTimeout` without a request
    /// (while none is being answered) the pipe is closed, so an idle peer cannot hold a place. `onEvent` sees
    /// each request answered, and the message that did not open when one closed a keyed pipe. Returns at once
    /// for a plain format, which carries no requests.
    public func serveRequests(
        with server: RequestServer, idleTimeout: Duration? = nil,
        onEvent: @escaping @Sendable (RequestServer.Event) -> Void = { _ in }
    ) async {
        guard transport != nil else { return }
        let activity = Activity()
        let watchdog = idleTimeout.map { idle in
            Task {
                while let due = activity.idleDue(after: idle) {
                    do { try await Task.sleep(until: due, clock: .continuous) } catch { return }
                }
                await self.close()
            }
        }
        defer { watchdog?.cancel() }
        for await message in messages {
            activity.began()
            defer { activity.ended() }
            guard message.isRequest else {
                await message.accept()
                continue
            }
            guard let (response, handled) = await server.answer(message.bytes) else { break }
            // A requester that left before it acknowledged the response gets it again by retrying (the journal).
            try? await message.respond(response)
            await message.accept()
            onEvent(.handled(handled))
        }
        if let rejection { onEvent(.rejected(rejection)) }
        await close()
    }
}

/// When a served pipe last began or ended answering a message, and whether it is answering one now.
private final class Activity: Sendable {
    private let state = Mutex((at: ContinuousClock.now, busy: false))

    func began() { state.withLock { $0 = (.now, true) } }
    func ended() { state.withLock { $0 = (.now, false) } }

    /// When to look again, or nil once the pipe has been idle for `idle`.
    func idleDue(after idle: Duration) -> ContinuousClock.Instant? {
        state.withLock { state in
            if state.busy { return .now + idle }
            return ContinuousClock.now >= state.at + idle ? nil : state.at + idle
        }
    }
}
