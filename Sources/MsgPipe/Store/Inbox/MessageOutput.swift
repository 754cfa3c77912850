public import MsgPipeCore
import Synchronization

/// Where a receiver puts each message it keeps: its raw bytes one after the other on a descriptor
/// (``MessageStream``), a file of its own in a directory (``MessageDirectory``: in its `folder`, then in a
/// folder per key name where the sender's key has one), or one text line each that the caller formats. Each
/// batch is written whole (and synced where the output is a file) before ``write(_:)`` returns, so none is
/// acknowledged before that.
///
/// ```swift
/// let output = try MessageOutput(.directory("inbox"))
/// let inbox = try MessageInbox(output: output, journalDirectory: output.directoryPath)
/// ```
public final class MessageOutput: InboxOutput {
    /// Where the messages go.
    public enum Destination: Sendable {
        /// Raw bytes on the descriptor; with `newline`, each message is followed by one (the lines format,
        /// whose messages are lines without their terminator).
        case stream(newline: Bool)
        /// A file per message in this directory, its delivery journal beside them (``directoryPath``).
        case directory(String)
        /// One line per message on the descriptor: `line(item, index)`, without its newline; `index` counts
        /// the messages written by this output from 1.
        case lines(@Sendable (Item, Int) -> String)
    }

    /// One message and what is known of where it came from.
    public struct Item: Sendable {
        public var body: [UInt8]
        /// Transport's id (nil for the plain formats).
        public var messageID: UInt32?
        /// The 1-based number of the connection it arrived on.
        public var connection: Int
        /// The central's address (or socket), or the peer connected to, if known.
        public var peer: String?
        /// What carried it ("gatt" or "l2cap"), if known.
        public var carrier: String?
        /// The authorized key that sealed it (end to end).
        public var sender: AuthorizedKeys.Entry?
        /// What the link ran on, if known.
        public var parameters: LinkParameters?
        /// In a directory: the folder under it (e.g. a peer's, ``MessageDirectory/folderName(_:)``).
        public var folder: String?

        public init(
            body: [UInt8], messageID: UInt32?, connection: Int, peer: String?, carrier: String? = nil,
            sender: AuthorizedKeys.Entry? = nil, parameters: LinkParameters? = nil, folder: String? = nil
        ) {
            (self.body, self.messageID, self.connection, self.peer) = (body, messageID, connection, peer)
            (self.carrier, self.sender, self.parameters, self.folder) = (carrier, sender, parameters, folder)
        }

        /// `message` as it arrived on `pipe`: its bytes, id and sender, and the pipe's connection count.
        ///
        /// ```swift
        /// let end = await inbox.receive(from: server) { message, central in
        ///     MessageOutput.Item(message, from: central, peer: central.peer)
        /// }
        /// ```
        public init(
            _ message: PipeMessage, from pipe: MessagePipe, peer: String?, carrier: String? = nil,
            parameters: LinkParameters? = nil, folder: String? = nil
        ) {
            self.init(
                body: message.bytes, messageID: message.id, connection: pipe.connections, peer: peer, carrier: carrier,
                sender: message.sender, parameters: parameters, folder: folder)
        }
    }

    private let destination: Destination
    private let directory: MessageDirectory?
    private let stream: MessageStream
    private let onKept: @Sendable (Int) -> Void
    private struct State {
        /// Messages written so far (a line's index).
        var written = 0
        /// Messages kept so far (written and published).
        var kept = 0
    }
    private let state = Mutex(State())

    /// An output to `destination`; a stream or lines go to `descriptor` (1: standard output). `onKept` gets the
    /// number of messages kept so far after each published batch. Throws when the directory cannot be used.
    public init(
        _ destination: Destination, descriptor: Int32 = 1, onKept: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws(InboxError) {
        self.destination = destination
        if case let .directory(path) = destination { directory = try MessageDirectory(path: path) } else { directory = nil }
        stream = MessageStream(descriptor: descriptor)
        self.onKept = onKept
    }

    /// With a directory: its path (the delivery journal goes there too).
    public var directoryPath: String? { directory?.path }

    public func write(_ items: [Item]) throws(InboxError) -> [String] {
        if let directory {
            return try directory.write(items.map { item in
                let folder = [item.folder, item.sender?.name].compactMap { $0 }.joined(separator: "/")
                return MessageDirectory.Item(bytes: item.body, folder: folder.isEmpty ? nil : folder)
            })
        }
        return try state.withLock { state throws(InboxError) in
            try stream.write(items.map { item in
                state.written += 1
                switch destination {
                case let .stream(newline): return newline ? item.body + [0x0A] : item.body
                case let .lines(line): return Array((line(item, state.written) + "\n").utf8)
                case .directory: return item.body
                }
            })
        }
    }

    public func publish(_ names: [String]) throws(InboxError) {
        try directory?.publish(names)
        let kept = state.withLock { state in
            state.kept += names.count
            return state.kept
        }
        onKept(kept)
    }

    public func discard(_ names: [String]) { directory?.discard(names) }

    public func recover(publishing names: [String]) throws(InboxError) { try directory?.recover(publishing: names) }
}
