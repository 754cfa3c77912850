import Framing

/// One journal record: `4A type length[4, big-endian] payload crc32[4, big-endian]`, the CRC over type,
/// length and payload. Payload: `digest[32] id_length id` for started (type 'S'), `digest[32]` + the
/// encoded ``ResponseEnvelope`` for completed (type 'C').
package enum JournalRecord: Equatable {
    case started(id: RequestID, digest: [UInt8])
    case completed(digest: [UInt8], response: ResponseEnvelope)

    package static let magic: UInt8 = 0x4A
    package static let startedType: UInt8 = 0x53
    package static let completedType: UInt8 = 0x43
    package static let headerCount = 6
    package static let trailerCount = 4
    package static let digestCount = 32

    package var id: RequestID {
        switch self {
        case let .started(id, _): id
        case let .completed(_, response): response.id
        }
    }

    package func encoded() -> [UInt8] {
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
        return JournalFrame.encode(magic: Self.magic, type: type, payload: payload)
    }

    /// The payload length of a record header, or nil when `header` is not one.
    package static func payloadCount(header: ArraySlice<UInt8>) -> Int? {
        guard header.count >= headerCount, header.first == magic,
            [startedType, completedType].contains(header[header.startIndex + 1])
        else { return nil }
        return Int(header.dropFirst(2).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// Decodes a whole record (header, payload, CRC); nil when the CRC or the payload is wrong.
    package init?(decoding bytes: ArraySlice<UInt8>) {
        let maximum = Self.payloadCount(header: bytes) ?? 0
        guard case let .frame(type, payload, count) = JournalFrame.read(
            bytes, magic: Self.magic, types: [Self.startedType, Self.completedType], maximumPayload: maximum),
            count == bytes.count
        else { return nil }
        guard payload.count >= Self.digestCount else { return nil }
        let digest = Array(payload.prefix(Self.digestCount))
        let rest = payload.dropFirst(Self.digestCount)
        if type == Self.startedType {
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

