import GATT
import Framing
import Logging
import Synchronization
import Transport

/// `listen` as the peripheral: serves up to `maximumCentrals` centrals at once and writes each central's
/// messages whole, in that central's order (centrals interleave message by message). With `--format
/// msgpipe` each central's session has a Transport of its own (``TransportListener``), kept while the
/// central reconnects; the plain formats decode each connection on its own.
final class PeripheralReceiver: Sendable {
    let link: LinkOptions
    let format: FrameFormat
    let maximumMessageSize: Int
    let maximumCentrals: Int
    let connections: Int?
    let logger: Logger
    let verbose: Bool
    let dropAfterBytes: Int?
    /// Told when a central's connection ended, with the number still connected.
    let onConnectionEnded: @Sendable (Int) -> Void
    private let active = Atomic<Int>(0)

    init(
        link: LinkOptions, format: FrameFormat, maximumMessageSize: Int, maximumCentrals: Int, connections: Int?,
        logger: Logger, verbose: Bool, dropAfterBytes: Int?, onConnectionEnded: @escaping @Sendable (Int) -> Void
    ) {
        self.link = link
        self.format = format
        self.maximumMessageSize = maximumMessageSize
        self.maximumCentrals = maximumCentrals
        self.connections = connections
        self.logger = logger
        self.verbose = verbose
        self.dropAfterBytes = dropAfterBytes
        self.onConnectionEnded = onConnectionEnded
    }

    /// Serves until `connections` centrals were served and their messages written (nil: until cancelled);
    /// throws when the link cannot be served. Output errors go to the sink's `onFailure`.
    func run(
        sink: SharedMessageSink, info: MsgPipeServiceInfo, shutdown: ShutdownSignal, onReady: (String) -> Void
    ) async throws {
        if format == .msgpipe {
            return try await receiveReliably(sink: sink, info: info, shutdown: shutdown, onReady: onReady)
        }
        let numbers = Atomic<Int>(0)
        try await link.acceptLinks(
            info: info, connections: connections, maximumConcurrent: maximumCentrals, shutdown: shutdown,
            verbose: verbose, unnumbered: true, onReady: onReady
        ) { [self] peerLink, peer in
            let number = numbers.add(1, ordering: .relaxed).newValue
            active.add(1, ordering: .relaxed)
            if verbose { printError("connection from \(peer)") }
            let observed = observe(peerLink)
            let limits = ReassemblyLimits(
                maximumMessageSize: maximumMessageSize, maximumBufferedBytes: max(maximumMessageSize, 1) * 2 + 16)
            _ = await PlainReceiving.receive(observed.events, format: format, limits: limits, logger: logger) { body throws(FileIOError) in
                try sink.write(body, messageID: nil, connection: number, peer: peer)
                return true
            }
            await peerLink.close()  // the central left, the output failed or --count was reached
            if verbose { printError("connection from \(peer) ended") }
            onConnectionEnded(active.subtract(1, ordering: .relaxed).newValue)
        }
    }

    private func receiveReliably(
        sink: SharedMessageSink, info: MsgPipeServiceInfo, shutdown: ShutdownSignal,
        onReady: (String) -> Void
    ) async throws {
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = maximumMessageSize
        options.endpoint.maximumBufferedBytes = max(options.endpoint.maximumBufferedBytes, 2 * maximumMessageSize + 8)
        var limits = TransportListener.Limits()
        // Room for every central connected plus as many that left and may come back to resume.
        limits.maximumSessions = 2 * maximumCentrals
        let listener = TransportListener(options: options, limits: limits, logger: logger)
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
            try await link.acceptLinks(
                info: info, connections: connections, maximumConcurrent: maximumCentrals, shutdown: shutdown,
                verbose: verbose, onReady: onReady
            ) { [self] peerLink, peer in
                active.add(1, ordering: .relaxed)
                if verbose { printError("connection from \(peer)") }
                await listener.accept(observe(peerLink), peer: peer)
                if verbose { printError("connection from \(peer) ended") }
                onConnectionEnded(active.subtract(1, ordering: .relaxed).newValue)
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

    /// The link as the receiving side sees it, with the `--drop-after-bytes` test hook.
    private func observe(_ peerLink: PeerLink) -> ObservedLink<PeerLink> {
        let hook = DropAfterBytesHook(limit: dropAfterBytes, logger: logger)
        return ObservedLink(peerLink, onEvent: { hook.observe($0, on: peerLink) }, onSent: { _ in })
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
