import Exchange

/// One record of a delivery journal (docs/PROTOCOL.md 3.10): `4B type length[4, big-endian] payload
/// crc32[4, big-endian]`, the CRC over type, length and payload.
///
/// - `K` kept: `session[8] id[4] name`: the message `id` of sender `session` is kept; `name` (UTF-8, at most
///   ``maximumNameCount`` bytes, may be empty) is its file relative to the output directory while it may still
///   wait under its temporary name.
/// - `P` published: every earlier `K` record's file has its final name.
enum DeliveryRecord: Equatable, Sendable {
    case kept(session: UInt64, id: UInt32, name: String)
    case published

    static let magic: UInt8 = 0x4B
    static let keptType: UInt8 = 0x4B
    static let publishedType: UInt8 = 0x50
    /// The longest file name a record holds, in bytes.
    static let maximumNameCount = 4096
    static let maximumPayloadCount = 12 + maximumNameCount

    func encoded() -> [UInt8] {
        let type: UInt8
        var payload: [UInt8] = []
        switch self {
        case let .kept(session, id, name):
            type = Self.keptType
            for shift in stride(from: 56, through: 0, by: -8) { payload.append(UInt8(truncatingIfNeeded: session >> UInt64(shift))) }
            payload += bigEndian(id)
            payload += Array(name.utf8)
        case .published:
            type = Self.publishedType
        }
        return JournalFrame.encode(magic: Self.magic, type: type, payload: payload)
    }

    /// How the bytes at the start of `bytes` read.
    enum Reading: Equatable {
        /// A whole record of `count` bytes.
        case record(DeliveryRecord, count: Int)
        /// The bytes end inside a record whose header reads (a torn append), or inside the header.
        case truncated
        /// Not a record: a wrong magic, type, length or CRC, or a payload that does not decode.
        case corrupt
    }

    /// Reads the record at the start of `bytes`.
    static func read(_ bytes: ArraySlice<UInt8>) -> Reading {
        let payload: ArraySlice<UInt8>
        let type: UInt8
        let count: Int
        switch JournalFrame.read(bytes, magic: magic, types: [keptType, publishedType], maximumPayload: maximumPayloadCount) {
        case .truncated: return .truncated
        case .corrupt: return .corrupt
        case let .frame(frameType, framePayload, frameCount): (type, payload, count) = (frameType, framePayload, frameCount)
        }
        if type == publishedType {
            return payload.isEmpty ? .record(.published, count: count) : .corrupt
        }
        guard payload.count >= 12 else { return .corrupt }
        let p = payload.startIndex
        let session = payload[p..<(p + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let id = payload[(p + 8)..<(p + 12)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard let name = String(validating: payload[(p + 12)...], as: UTF8.self) else { return .corrupt }
        return .record(.kept(session: session, id: id, name: name), count: count)
    }
}

/// The record codec, reachable from the fuzz package (Fuzz/Sources/InboxFuzzer) without making
/// ``DeliveryRecord`` public: `@_spi(Fuzzing) import MsgPipe`.
@_spi(Fuzzing)
public enum DeliveryRecordCodec {
    /// The journal file's first bytes.
    public static var header: [UInt8] { DeliveryJournalReplay.header }

    /// The record at the start of `bytes` encoded again, and its length on the wire; nil when no whole record
    /// starts there.
    public static func reencode(_ bytes: ArraySlice<UInt8>) -> (encoded: [UInt8], count: Int)? {
        guard case let .record(record, count) = DeliveryRecord.read(bytes) else { return nil }
        return (record.encoded(), count)
    }
}
