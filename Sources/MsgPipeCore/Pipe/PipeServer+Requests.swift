public import Exchange
import Synchronization

extension PipeServer {
    /// Answers every central's requests with `server`, each central in a child task, until the server closes.
    /// A central that reconnects resumes its session and gets the response it missed. Cancelling the caller
    /// closes the server and cancels a running handler. With ``MessagePipe/Options/keys``: sealed, authenticated.
    ///
    /// ```swift
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
}

extension MessagePipe {
    /// Answers this pipe's requests with `server`, one after the other, until the pipe ends, then closes it;
    /// other messages are dropped. `idleTimeout` without a request closes the pipe. `onEvent` sees each answer
    /// and a message that did not open. Returns at once on a plain format.
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
