import Framing
import MsgPipe
import Synchronization
import Transport

/// `listen` as the peripheral, on the library's ``PipeAcceptor``: serves up to `maximumCentrals` centrals at
/// once and writes each central's messages whole, in that central's order (centrals interleave message by
/// message). With `--format msgpipe` each central's session has a Transport of its own (``TransportListener``),
/// kept while the central reconnects; the plain formats decode each connection on its own.
final class PeripheralReceiver: Sendable {
    let acceptor: PipeAcceptor
    let connections: Int?
    let verbose: Bool
    /// Told when a central's connection ended, with the number still connected.
    let onConnectionEnded: @Sendable (Int) -> Void
    private let active = Atomic<Int>(0)

    var options: MessagePipe.Options { acceptor.options }

    init(acceptor: PipeAcceptor, connections: Int?, verbose: Bool, onConnectionEnded: @escaping @Sendable (Int) -> Void) {
        self.acceptor = acceptor
        self.connections = connections
        self.verbose = verbose
        self.onConnectionEnded = onConnectionEnded
    }

    /// Serves until `connections` centrals were served and their messages written (nil: until cancelled);
    /// throws when the link cannot be served. Output errors go to the sink's `onFailure`.
    func run(sink: SharedMessageSink, onReady: (String) -> Void) async throws {
        let options = options
        if options.format == .msgpipe {
            return try await receiveReliably(sink: sink, onReady: onReady)
        }
        let numbers = Atomic<Int>(0)
        try await acceptor.acceptLinks(
            info: options.serviceInfo(), connections: connections, maximumConcurrent: options.maximumCentrals,
            unnumbered: true, onReady: onReady
        ) { [self] peerLink, peer in
            let number = numbers.add(1, ordering: .relaxed).newValue
            started(peer)
            let events = ObservedEvents(base: peerLink.events) { CommandTaps.current.received?($0, peerLink) }
            let limits = PlainReceiving.limits(maximumMessageSize: options.maximumMessageSize)
            _ = await PlainReceiving.receive(events, format: options.format, limits: limits, logger: options.logger) {
                body throws(FileIOError) in
                try sink.write(body, messageID: nil, connection: number, peer: peer)
                return true
            }
            await peerLink.close()  // the central left, the output failed or --count was reached
            ended(peer)
        }
    }

    private func receiveReliably(sink: SharedMessageSink, onReady: (String) -> Void) async throws {
        let options = options
        var limits = TransportListener.Limits()
        // Room for every central connected plus as many that left and may come back to resume.
        limits.maximumSessions = 2 * options.maximumCentrals
        let listener = TransportListener(options: options.transportOptions(), limits: limits, logger: options.logger)
        let writing = Task { [verbose] in
            await withTaskGroup(of: Void.self) { group in
                for await session in listener.sessions {
                    if verbose { printError("session \(String(session.id, radix: 16)) from \(session.peer)") }
                    group.addTask {
                        for await message in session.transport.messages {
                            do throws(FileIOError) {
                                try sink.write(
                                    message.body, messageID: message.messageID, connection: session.latestConnection,
                                    peer: session.peer)
                            } catch {
                                await listener.close()  // the output is gone or --count was reached: stop receiving
                                return
                            }
                        }
                    }
                }
            }
        }
        do {
            try await acceptor.acceptLinks(
                info: options.serviceInfo(), connections: connections, maximumConcurrent: options.maximumCentrals,
                onReady: onReady
            ) { [self] peerLink, peer in
                started(peer)
                let observed = ObservedLink(
                    peerLink, onEvent: { CommandTaps.current.received?($0, peerLink) }, onSent: { _ in })
                await listener.accept(observed, peer: peer)
                ended(peer)
            }
        } catch {
            await listener.close()
            writing.cancel()
            throw error
        }
        // Every central was served: messages already delivered are still written.
        await listener.close()
        await writing.value
    }

    private func started(_ peer: String) {
        active.add(1, ordering: .relaxed)
        if verbose { printError("connection from \(peer)") }
    }

    private func ended(_ peer: String) {
        if verbose { printError("connection from \(peer) ended") }
        onConnectionEnded(active.subtract(1, ordering: .relaxed).newValue)
    }
}

/// The `listen` output shared by concurrently served centrals: one message written whole at a time, at
/// most `limit` messages (`--count`).
final class SharedMessageSink: Sendable {
    private struct State {
        var sink: MessageSink
        var failure: FileIOError?
        var written = 0
    }

    private let state: Mutex<State>
    private let limit: Int?
    private let onFailure: @Sendable (FileIOError) -> Void
    private let onLimit: @Sendable () -> Void

    /// `onFailure` sees the first write error (the output is gone: the command ends with its exit code),
    /// `onLimit` runs once `limit` messages were written.
    init(
        _ sink: sending MessageSink, limit: Int? = nil, onFailure: @escaping @Sendable (FileIOError) -> Void = { _ in },
        onLimit: @escaping @Sendable () -> Void = {}
    ) {
        state = Mutex(State(sink: sink))
        self.limit = limit
        self.onFailure = onFailure
        self.onLimit = onLimit
    }

    /// The first error writing the output, if any.
    var failure: FileIOError? { state.withLock { $0.failure } }

    /// True once `limit` messages were written.
    var reachedLimit: Bool { state.withLock { state in limit.map { state.written >= $0 } ?? false } }

    /// Writes one message; throws the output's error, or ``FileIOError`` "limit" once `limit` messages were
    /// written (the message is then not written: the receiving of that central stops).
    func write(_ body: [UInt8], messageID: UInt32?, connection: Int, peer: String?) throws(FileIOError) {
        enum Outcome { case written(reachedLimit: Bool), failed(FileIOError, first: Bool), full }
        let outcome = state.withLock { state -> Outcome in
            if let failure = state.failure { return .failed(failure, first: false) }
            if let limit, state.written >= limit { return .full }
            do throws(FileIOError) {
                try state.sink.write(body, messageID: messageID, connection: connection, peer: peer)
            } catch {
                state.failure = error
                return .failed(error, first: true)
            }
            state.written += 1
            return .written(reachedLimit: limit == state.written)
        }
        switch outcome {
        case let .written(reachedLimit):
            if reachedLimit { onLimit() }
        case let .failed(error, first):
            if first { onFailure(error) }
            throw error
        case .full:
            throw FileIOError(description: "--count messages were written", exitCode: 0)
        }
    }
}
