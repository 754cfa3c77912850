import BLELink
import GATT
import Backpressure
import Synchronization
import Transport

extension SendSession {
    /// The peripheral (`send --name`, `--role peripheral`): listens on the socket (or advertises), waits until
    /// `centrals` centrals subscribed, then sends the inputs to every one of them at once, each paced by its
    /// own link (a slow central holds only its own Transport window). With `--format msgpipe` a central that
    /// drops and comes back resumes its own session; success means every central acknowledged every
    /// message. A central that fails is reported by address; the exit code is the first failure's.
    func serve(inputs: SendInputs, centrals: Int, json: Bool) async -> SendExitCode {
        let info = serviceInfo(largestMessage: inputs.sizes.max() ?? 0)
        let outcomes: [(peer: String, code: SendExitCode)]?
        if format == .msgpipe {
            outcomes = await serveSessions(centrals: centrals, maximumMessageSize: inputs.sizes.max() ?? 0, info: info) {
                session in
                var results = SendResults(inputs: inputs.paths, json: json, peer: session.peer)
                let code = await sendMessages(
                    inputs, over: session.transport, peerInfo: { nil }, results: &results, linkLost: { false })
                if code != .success { printError("central \(session.peer) failed (exit code \(code.rawValue))") }
                return (session.peer, code)
            }
        } else {
            let failure = FirstFailure()
            let (served, accepting) = await servePlain(
                inputs: inputs, centrals: centrals, json: json, info: info, failure: failure)
            outcomes = await finishServing(served, centrals: centrals, accepting: accepting, failure: failure)
        }
        guard let outcomes else { return .linkFailure }
        return outcomes.first { $0.code != .success }?.code ?? .success
    }

    /// What the peripheral's info characteristic says: the format, messages up to the largest to send (at
    /// least 16 MiB), and the largest ATT_MTU.
    func serviceInfo(largestMessage: Int) -> MsgPipeServiceInfo {
        MsgPipeServiceInfo(
            formats: ListenCommand.advertisedFormats(format),
            maximumMessageSize: UInt32(clamping: max(largestMessage, 16 << 20)),
            serverMTU: UInt16(ATTOpcode.maximumMTU))
    }

    /// The peripheral's Transport sessions (``TransportListener``: a session outlives reconnects): accepts
    /// centrals until `centrals` subscribed, then runs `transfer` on every one of them at once. Returns the
    /// outcomes once all ended, or nil (after saying why on standard error) when the accept loop failed or
    /// fewer centrals subscribed. `onEvent` sees each connection's link events with the central's address,
    /// `onBearer` its ATT bearer (msgpipe's own GATT only).
    func serveSessions<Outcome: Sendable>(
        centrals: Int, maximumMessageSize: Int, info: MsgPipeServiceInfo,
        onEvent: @escaping @Sendable (String, LinkEvent) -> Void = { _, _ in },
        onBearer: @escaping @Sendable (ATTBearer, String) -> Void = { _, _ in },
        transfer: @escaping @Sendable (TransportSession) async -> Outcome
    ) async -> [Outcome]? {
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = max(options.endpoint.maximumMessageSize, maximumMessageSize)
        var limits = TransportListener.Limits()
        limits.maximumSessions = 2 * centrals
        // A central that left for longer fails its transfer (Transport's send throws `closed`).
        limits.resumeWindow = .seconds(60)
        let listener = TransportListener(options: options, limits: limits, logger: logger)
        let failure = FirstFailure()
        let accepting = accept(
            centrals: centrals, info: info, failure: failure, onFailure: { await listener.close() }, onBearer: onBearer
        ) { peerLink, peer in
            logger.debug("central connected: \(peer)")
            let observed = ObservedLink(peerLink, onEvent: { onEvent(peer, $0) }, onSent: { [progress] in progress.add($0) })
            await listener.accept(observed, peer: peer)
        }
        var sessions: [TransportSession] = []
        for await session in listener.sessions {
            logger.debug("central \(session.peer) subscribed")
            sessions.append(session)
            if sessions.count == centrals { break }
        }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for session in sessions {
                group.addTask { await transfer(session) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        await listener.close()
        return await finishServing(outcomes, centrals: centrals, accepting: accepting, failure: failure)
    }

    /// Ends the accept loop once the transfers ended; nil (said on standard error) when it failed or fewer
    /// than `centrals` centrals took part.
    private func finishServing<Outcome>(
        _ outcomes: [Outcome], centrals: Int, accepting: Task<Void, Never>, failure: FirstFailure
    ) async -> [Outcome]? {
        accepting.cancel()
        // The socket's accept wait ends on cancellation (and removes the socket file); the Bluetooth
        // advertiser's wait for the next central is a blocking call, ended with the process.
        if case .unix? = try? link.endpoint() { await accepting.value }
        if let error = failure.error {
            printError("cannot serve on \(link.displayName): \(error)")
            return nil
        }
        guard outcomes.count == centrals else {
            printError("\(outcomes.count) of \(centrals) centrals subscribed")
            return nil
        }
        return outcomes
    }

    /// Plain framing to each connection: no acknowledgements, no resume.
    private func servePlain(
        inputs: SendInputs, centrals: Int, json: Bool, info: MsgPipeServiceInfo, failure: FirstFailure
    ) async -> ([(peer: String, code: SendExitCode)], Task<Void, Never>) {
        let results = AsyncStream<(peer: String, code: SendExitCode)>.makeStream()
        // Everyone waits until `centrals` centrals subscribed: each announces itself with one credit, then
        // takes all of them and gives them back, so the last one lets every one through.
        let subscribed = CreditPool(capacity: centrals, initial: 0)
        let taken = Atomic<Int>(0)
        let accepting = accept(centrals: centrals, info: info, failure: failure, onFailure: { results.continuation.finish() }) {
            peerLink, peer in
            var report = SendResults(inputs: inputs.paths, json: json, peer: peer)
            // A central counts once it subscribed: one that connects, looks at the services and leaves (or
            // one past the first `centrals`) takes no place and fails nothing.
            let code = await sendPlain(over: peerLink, inputs: inputs, results: &report) {
                guard taken.add(1, ordering: .relaxed).newValue <= centrals else { return false }
                subscribed.release()
                try? await subscribed.acquire(centrals)
                subscribed.release(centrals)
                return true
            }
            guard let code else {
                logger.debug("central \(peer) left before it subscribed, or came after the first \(centrals)")
                return
            }
            if code != .success { printError("central \(peer) failed (exit code \(code.rawValue))") }
            results.continuation.yield((peer, code))
        }
        var outcomes: [(peer: String, code: SendExitCode)] = []
        for await outcome in results.stream {
            outcomes.append(outcome)
            if outcomes.count == centrals { break }
        }
        return (outcomes, accepting)
    }

    /// The accept loop of `send` as peripheral: each central's link handed to `handle` (on msgpipe's own
    /// GATT, served while `handle` runs); room for a second connection per central (one that reconnects
    /// before its old connection timed out).
    private func accept(
        centrals: Int, info: MsgPipeServiceInfo, failure: FirstFailure,
        onFailure: @escaping @Sendable () async -> Void,
        onBearer: @escaping @Sendable (ATTBearer, String) -> Void = { _, _ in },
        handle: @escaping @Sendable (PeerLink, String) async -> Void
    ) -> Task<Void, Never> {
        Task { [link, logger] in
            do {
                try await link.acceptLinks(
                    info: info, connections: nil, maximumConcurrent: 2 * centrals, centralsAtOnce: centrals, shutdown: nil,
                    verbose: logger.logLevel <= .debug, unnumbered: format != .msgpipe, onReady: { printError($0) },
                    onBearer: onBearer, handle: handle)
            } catch is CancellationError {
            } catch ATTError.cancelled {
            } catch {
                failure.record(error)
                await onFailure()
            }
        }
    }
}

/// The first error of a background task, for the task that waits on it.
final class FirstFailure: Sendable {
    private let value = Mutex<(any Error)?>(nil)

    var error: (any Error)? { value.withLock { $0 } }

    func record(_ error: any Error) { value.withLock { $0 = $0 ?? error } }
}
