import Framing

/// One journal record: `4A type length[4, big-endian] payload crc32[4, big-endian]`, the CRC over type,
/// length and payload. Payload: `digest[32] id_length id` for started (type 'S'), `digest[32]` + the
/// encoded ``ResponseEnvelope`` for completed (type 'C').
enum JournalRecord: Equatable {
    case started(id: RequestID, digest: [UInt8])
    case completed(digest: [UInt8], response: ResponseEnvelope)

    static let magic: UInt8 = 0x4A
    static let startedType: UInt8 = 0x53
    static let completedType: UInt8 = 0x43
    static let headerCount = 6
    static let trailerCount = 4
    static let digestCount = 32

    var id: RequestID {
        switch self {
        case let .started(id, _): id
        case let .completed(_, response): response.id
        }
    }

    func encoded() -> [UInt8] {
        let type: UInt8
        var payload: [UInt8]
        switch self {
        case let .started(id, digest):
            type = Self.startedType
            payload = digest + [UInt8(id.bytes.count)] + id.bytes
        case let .completed(digest, response):
            type = Self.completedType
            payload = digest + response.encoded()
        }
        let count = UInt32(payload.count)
        var out = [Self.magic, type] + bigEndian(count)
        out += payload
        var crc = CRC32()
        crc.update(out.dropFirst())
        return out + bigEndian(crc.value)
    }

    /// The payload length of a record header, or nil when `header` is not one.
    static func payloadCount(header: ArraySlice<UInt8>) -> Int? {
        guard header.count >= headerCount, header.first == magic,
            [startedType, completedType].contains(header[header.startIndex + 1])
        else { return nil }
        return Int(header.dropFirst(2).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// Decodes a whole record (header, payload, CRC); nil when the CRC or the payload is wrong.
    init?(decoding bytes: ArraySlice<UInt8>) {
        guard let count = Self.payloadCount(header: bytes),
            bytes.count == Self.headerCount + count + Self.trailerCount
        else { return nil }
        let checked = bytes.dropFirst().dropLast(Self.trailerCount)
        let stored = bytes.suffix(Self.trailerCount).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard CRC32.checksum(checked) == stored else { return nil }
        let payload = bytes.dropFirst(Self.headerCount).dropLast(Self.trailerCount)
        guard payload.count >= Self.digestCount else { return nil }
        let digest = Array(payload.prefix(Self.digestCount))
        let rest = payload.dropFirst(Self.digestCount)
        if bytes[bytes.startIndex + 1] == Self.startedType {
            guard let length = rest.first, rest.count == 1 + Int(length),
                let id = try? RequestID(decoding: rest.dropFirst())
            else { return nil }
            self = .started(id: id, digest: digest)
        } else {
            guard let response = try? ResponseEnvelope(decoding: rest) else { return nil }
            self = .completed(digest: digest, response: response)
        }
    }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
     UInt8(truncatingIfNeeded: value)]
}
