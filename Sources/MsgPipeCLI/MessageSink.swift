import MsgPipe
import FoundationEssentials
import MsgPipeStore
import Synchronization

/// Where `msgpipe listen` puts each received message: its raw bytes on standard output (``MessageStream``), a
/// file of its own in a directory (``MessageDirectory``), or one JSON line on standard output. A ``MessageInbox`` hands it the
/// messages in batches; each batch is written out completely (and synced where the output is a file) before
/// it returns, so a consumer sees whole messages in arrival order and none is acknowledged before that.
final class MessageSink: InboxOutput {
    /// The three output modes of `listen`.
    enum Mode {
        /// Raw bytes; with `newline`, each message is followed by one (the lines format, whose messages are
        /// lines without their terminator).
        case stdout(newline: Bool = false)
        case directory(String)
        case json
    }

    /// One message and what `--json` says of it.
    struct Item: Sendable {
        var body: [UInt8]
        /// Transport's id (nil for the plain formats).
        var messageID: UInt32?
        /// The 1-based number of the connection it arrived on.
        var connection: Int
        /// The central's address (or socket), or the `--to` peer, if known.
        var peer: String?
        /// What carried it ("gatt" or "l2cap"), if known.
        var link: String? = nil
        /// The authorized key that sealed it (end to end).
        var sender: AuthorizedKeys.Entry? = nil
        var parameters: LinkParameterFields = LinkParameterFields(nil)
        /// With `--out-dir`: the folder under it (a `--to` peer's, ``MessageDirectory/folderName(_:)``).
        var folder: String? = nil
    }

    private let mode: Mode
    private let directory: MessageDirectory?
    private let standardOutput = MessageStream()
    private struct State {
        /// Messages written so far by this process (`--json`'s index).
        var count = 0
        /// Messages kept so far (written, journaled and published).
        var kept = 0
    }
    private let state = Mutex(State())

    init(_ mode: Mode) throws(InboxError) {
        self.mode = mode
        if case let .directory(path) = mode { directory = try MessageDirectory(path: path) } else { directory = nil }
    }

    /// With `--out-dir`: the directory (its delivery journal goes there too).
    var directoryPath: String? { directory?.path }

    func write(_ items: [Item]) throws(InboxError) -> [String] {
        if let directory {
            // End to end with a key list: a directory per key name (names never start with a dot).
            // Several --to: a directory per peer.
            return try directory.write(items.map { item in
                let folder = [item.folder, item.sender?.name].compactMap { $0 }.joined(separator: "/")
                return MessageDirectory.Item(bytes: item.body, folder: folder.isEmpty ? nil : folder)
            })
        }
        return try state.withLock { state throws(InboxError) in
            try standardOutput.write(items.map { item in
                state.count += 1
                switch mode {
                case let .stdout(newline): return newline ? item.body + [0x0A] : item.body
                case .json, .directory:
                    return Array((JSONLine.text(Self.line(item, index: state.count), adding: item.parameters) + "\n").utf8)
                }
            })
        }
    }

    func publish(_ names: [String]) throws(InboxError) {
        try directory?.publish(names)
        let kept = state.withLock { state in
            state.kept += names.count
            return state.kept
        }
        CommandTaps.current.kept?(kept)
    }

    func discard(_ names: [String]) { directory?.discard(names) }

    func recover(publishing names: [String]) throws(InboxError) { try directory?.recover(publishing: names) }

    private static func line(_ item: Item, index: Int) -> MessageLine {
        MessageLine(
            index: index, connection: item.connection, peer: item.peer, link: item.link, id: OrNull(item.messageID),
            bytes: item.body.count, crc32: hex32(CRC32.checksum(item.body)), data: Data(item.body).base64EncodedString(),
            peerKey: item.sender?.key.text, peerName: item.sender?.name)
    }

    /// 8 lowercase hex digits.
    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

/// One `listen --json` line: {"bytes":B,"connection":C,"crc32":"8 hex digits","data":"base64","id":ID,"index":N,
/// "link":"gatt"|"l2cap","peer":"ADDRESS","peer_key":"msgpipe-x25519-public:HEX","peer_name":"NAME"}, and
/// ``LinkParameterFields``.
struct MessageLine: Encodable {
    let index: Int
    let connection: Int
    /// The peer's address (or socket path) it came from; absent where unknown.
    let peer: String?
    /// What carried the message: "gatt" or "l2cap"; absent where unknown (a peripheral's msgpipe session).
    let link: String?
    /// Transport's message id; null (not absent) for the plain formats.
    let id: OrNull<UInt32>
    let bytes: Int
    let crc32: String
    let data: String
    /// End to end (`--authorized-keys`, `--peer-key`): the public key that sealed the message; absent otherwise.
    let peerKey: String?
    /// The name of `peerKey` in the authorized-keys file; absent without one.
    let peerName: String?

    enum CodingKeys: String, CodingKey {
        case index, connection, peer, link, id, bytes, crc32, data
        case peerKey = "peer_key"
        case peerName = "peer_name"
    }
}
