import GATT
import Framing
import Logging
import Synchronization
import Transport

/// `listen` as the peripheral: serves up to `maximumCentrals` centrals at once and writes each central's
/// messages whole, in that central's order (centrals interleave message by message). With `--format
/// msgpipe` each central's session has a Transport of its own (``TransportListener``), kept while the
/// central reconnects; the plain formats decode each connection on its own.
struct PeripheralReceiver: Sendable {
    let link: LinkOptions
    let format: FrameFormat
    let maximumMessageSize: Int
    let maximumCentrals: Int
    let connections: Int?
    let logger: Logger
    let verbose: Bool
    let dropAfterBytes: Int?

    /// Serves until `connections` centrals were served and their messages written (nil: until cancelled).
    /// Returns the first output error (receiving stops at it); throws when the link cannot be served.
    func run(
        sink: SharedMessageSink, info: MsgPipeServiceInfo, shutdown: ShutdownSignal, onReady: (String) -> Void
    ) async throws -> FileIOError? {
        let profile = try link.gattProfile()
        if format == .msgpipe {
            return try await receiveReliably(sink: sink, profile: profile, info: info, shutdown: shutdown, onReady: onReady)
        }
        let numbers = Atomic<Int>(0)
        try await link.acceptBearers(
            profile: profile, connections: connections, maximumConcurrent: maximumCentrals, shutdown: shutdown,
            onReady: onReady
        ) { [self] bearer, peer in
            let number = numbers.add(1, ordering: .relaxed).newValue
            if verbose { printError("connection from \(peer)") }
            let gattLink = GATTLink(profile: profile)
            let observed = observe(gattLink)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    let limits = ReassemblyLimits(
                        maximumMessageSize: maximumMessageSize, maximumBufferedBytes: max(maximumMessageSize, 1) * 2 + 16)
                    _ = await PlainReceiving.receive(observed.events, format: format, limits: limits, logger: logger) { body throws(FileIOError) in
                        try sink.write(body, messageID: nil, connection: number, peer: peer)
                    }
                }
                await gattLink.serve(bearer, info: info)
                await gattLink.close()
            }
            if verbose { printError("connection from \(peer) ended") }
        }
        return sink.failure
    }

    private func receiveReliably(
        sink: SharedMessageSink, profile: GATTServiceProfile, info: MsgPipeServiceInfo, shutdown: ShutdownSignal,
        onReady: (String) -> Void
    ) async throws -> FileIOError? {
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
                                await listener.close()  // the output is gone: stop receiving
                                return
                            }
                        }
                    }
                }
            }
        }
        do {
            try await link.acceptBearers(
                profile: profile, connections: connections, maximumConcurrent: maximumCentrals, shutdown: shutdown,
                onReady: onReady
            ) { [self] bearer, peer in
                if verbose { printError("connection from \(peer)") }
                let gattLink = GATTLink(profile: profile)
                let observed = observe(gattLink)
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await listener.accept(observed, peer: peer) }
                    await gattLink.serve(bearer, info: info)
                    await gattLink.close()
                }
                if verbose { printError("connection from \(peer) ended") }
            }
        } catch {
            await listener.close()
            writing.cancel()
            throw error
        }
        // Every central was served: messages already delivered are still written.
        await listener.close()
        await writing.value
        return sink.failure
    }

    /// The link as the receiving side sees it, with the `--drop-after-bytes` test hook: the connection is
    /// dropped once that many bytes arrived on it.
    private func observe(_ gattLink: GATTLink) -> ObservedLink<GATTLink> {
        let received = Atomic<Int>(0)
        return ObservedLink(gattLink, onEvent: { [dropAfterBytes, logger] event in
            guard let dropAfterBytes, case let .packet(packet) = event else { return }
            let before = received.add(packet.count, ordering: .relaxed).newValue - packet.count
            if before < dropAfterBytes && before + packet.count >= dropAfterBytes {
                logger.warning("dropping the connection after \(before + packet.count) bytes (--drop-after-bytes)")
                Task { await gattLink.disconnect() }  // a test hook, once per connection
            }
        }, onSent: { _ in })
    }
}

/// The `listen` output shared by concurrently served centrals: one message written whole at a time.
final class SharedMessageSink: Sendable {
    private let sink: Mutex<MessageSink>
    private let firstFailure = Mutex<FileIOError?>(nil)
    private let onFailure: @Sendable (FileIOError) -> Void

    /// `onFailure` sees the first write error (the output is gone: the command ends with its exit code).
    init(_ sink: sending MessageSink, onFailure: @escaping @Sendable (FileIOError) -> Void = { _ in }) {
        self.sink = Mutex(sink)
        self.onFailure = onFailure
    }

    /// The first error writing the output, if any.
    var failure: FileIOError? { firstFailure.withLock { $0 } }

    func write(_ body: [UInt8], messageID: UInt32?, connection: Int, peer: String?) throws(FileIOError) {
        do throws(FileIOError) {
            try sink.withLock { sink throws(FileIOError) in
                try sink.write(body, messageID: messageID, connection: connection, peer: peer)
            }
        } catch {
            let first = firstFailure.withLock { failure in
                defer { failure = failure ?? error }
                return failure == nil
            }
            if first { onFailure(error) }
            throw error
        }
    }
}
