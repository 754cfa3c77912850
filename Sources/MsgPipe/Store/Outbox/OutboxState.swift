import Exchange

/// What an outbox keeps beside its messages, in `DIR/.msgpipe-outbox` (docs/PROTOCOL.md 3.11): its sender
/// session, and the highest message id it took out (acknowledged, or set aside as refused). The file is the
/// header `msgpipe outbox 1\n` and one record `4f 53 length[4] session[8] removed[4] crc32[4]` (big-endian), and
/// is replaced whole (written, synced, renamed): it is never appended to. (Public to the fuzz package only.)
@_spi(Fuzzing)
public struct OutboxState: Sendable, Equatable {
    static let fileName = ".msgpipe-outbox"
    static let header = Array("msgpipe outbox 1\n".utf8)
    static let magic: UInt8 = 0x4f  // "O"
    static let recordType: UInt8 = 0x53  // "S"
    static let payloadCount = 12

    /// The sender session messages go out in (never 0).
    public var session: UInt64
    /// The highest id taken out of the outbox; ids up to it are never given to a message again. 0: none yet.
    public var removedThrough: UInt32

    public init(session: UInt64, removedThrough: UInt32) {
        self.session = session
        self.removedThrough = removedThrough
    }

    /// Why bytes are not an outbox state.
    public enum Unreadable: Error, Equatable {
        /// Another header: not a msgpipe outbox, or another version.
        case foreign
        /// The header reads, the record does not (truncated, a wrong CRC, trailing bytes, session 0).
        case corrupt
    }

    public func encoded() -> [UInt8] {
        var payload: [UInt8] = []
        for shift in stride(from: 56, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: session >> UInt64(shift))) }
        payload += bigEndian(removedThrough)
        return Self.header + JournalFrame.encode(magic: Self.magic, type: Self.recordType, payload: payload)
    }

    public init(decoding bytes: [UInt8]) throws(Unreadable) {
        guard bytes.starts(with: Self.header) else { throw .foreign }
        let rest = bytes[Self.header.count...]
        guard case let .frame(_, payload, count) = JournalFrame.read(
            rest, magic: Self.magic, types: [Self.recordType], maximumPayload: Self.payloadCount),
            count == rest.count, payload.count == Self.payloadCount
        else { throw .corrupt }
        let session = payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard session != 0 else { throw .corrupt }
        self.session = session
        removedThrough = payload.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}

/// For the fuzz package: the state file's header and the names in an outbox directory.
@_spi(Fuzzing)
public enum OutboxStateCodec {
    public static var header: [UInt8] { OutboxState.header }

    /// Every name in `directory` but "." and ".." (none when it cannot be read).
    public static func files(in directory: String) -> [String] {
        (try? DurableFiles.entries(of: directory)) ?? []
    }
}
