import GATT
import BLELink
import Framing
import Logging
import Synchronization
import Transport

/// The receiving half of `msgpipe listen`: Transport (format msgpipe) or a plain framing decoder over the
/// GATT link's events, writing each message to a ``MessageSink`` as it is delivered.
final class MessageReceiver: Sendable {
    let format: FrameFormat
    let maximumMessageSize: Int
    let logger: Logger
    /// Connections started so far (the current one's number).
    let connections = Atomic<Int>(0)
    private let transport = Mutex<Transport?>(nil)
    private let failure = Mutex<FileIOError?>(nil)

    private let dropHook: DropAfterBytesHook
    /// Told of every disconnect of the link (a central reconnects with it).
    private let onDisconnected: @Sendable (String) -> Void

    init(
        format: FrameFormat, maximumMessageSize: Int, verbose: Bool, dropAfterBytes: Int? = nil,
        onDisconnected: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.format = format
        self.maximumMessageSize = maximumMessageSize
        self.onDisconnected = onDisconnected
        var logger = Logger(label: "msgpipe") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        self.logger = logger
        dropHook = DropAfterBytesHook(limit: dropAfterBytes, logger: logger)
    }

    /// The first error writing the output, if any (receiving stops at it).
    var outputError: FileIOError? { failure.withLock { $0 } }

    /// Starts receiving on `link`; the task ends when the link closes (after ``finish(_:)``), writing fails,
    /// or `count` messages were written (nil: no limit).
    func start(on link: PeerLink, sink: sending MessageSink, count: Int? = nil) -> Task<FileIOError?, Never> {
        if format == .msgpipe {
            var options = TransportOptions()
            options.endpoint.maximumMessageSize = maximumMessageSize
            options.endpoint.maximumBufferedBytes = max(options.endpoint.maximumBufferedBytes, 2 * maximumMessageSize + 8)
            let observed = ObservedLink(link, onEvent: { [self] in observe($0, on: link) }, onSent: { _ in })
            let transport = Transport(link: observed, options: options, logger: logger)
            self.transport.withLock { $0 = transport }
            return Task {
                for await message in transport.messages {
                    do throws(FileIOError) {
                        try sink.write(message.body, messageID: message.messageID, connection: currentConnection, peer: nil)
                    } catch {
                        return record(error)
                    }
                    if let count, sink.count >= count { return nil }
                }
                return nil
            }
        }
        return Task { await receivePlain(link, sink: sink, count: count) }
    }

    /// Ends receiving after the last connection: closes Transport (messages already delivered are still
    /// written) or the link.
    func finish(_ link: PeerLink) async {
        if let transport = transport.withLock({ $0 }) {
            await transport.close()
        } else {
            await link.close()
        }
    }

    private var currentConnection: Int { connections.load(ordering: .relaxed) }

    /// Reports disconnects (the central reconnects) and runs the `--drop-after-bytes` hook.
    private func observe(_ event: LinkEvent, on link: PeerLink) {
        if case let .disconnected(reason) = event { onDisconnected(reason) }
        dropHook.observe(event, on: link)
    }

    private func record(_ error: FileIOError) -> FileIOError {
        failure.withLock { $0 = $0 ?? error }
        return error
    }

    /// Plain framing: decodes the RX packets of each connection; a message left partial when its central
    /// disconnects is reported and dropped.
    private func receivePlain(_ link: PeerLink, sink: MessageSink, count: Int?) async -> FileIOError? {
        let limits = ReassemblyLimits(
            maximumMessageSize: maximumMessageSize, maximumBufferedBytes: max(maximumMessageSize, 1) * 2 + 16)
        let observed = ObservedLink(link, onEvent: { [self] in observe($0, on: link) }, onSent: { _ in })
        let failure = await PlainReceiving.receive(observed.events, format: format, limits: limits, logger: logger) {
            body throws(FileIOError) in
            try sink.write(body, messageID: nil, connection: currentConnection, peer: nil)
            return count.map { sink.count < $0 } ?? true
        }
        return failure.map(record)
    }
}
