import Framing

/// A request as the secure channel carries it: `01 51 id_length id body` (0x51 is 'Q').
public struct RequestEnvelope: Sendable, Equatable {
    static let type: UInt8 = 0x51

    public var id: RequestID
    public var body: [UInt8]

    public init(id: RequestID, body: [UInt8]) {
        self.id = id
        self.body = body
    }

    public init(decoding bytes: [UInt8]) throws(ExchangeError) {
        var reader = ByteReader(bytes[...])
        guard try reader.readEnvelopeByte("version") == envelopeVersion,
            try reader.readEnvelopeByte("type") == Self.type
        else { throw .malformedEnvelope("not a version 1 request envelope") }
        id = try reader.readRequestID()
        body = Array(reader.readRemaining())
    }

    public func encoded() -> [UInt8] {
        [envelopeVersion, Self.type, UInt8(id.bytes.count)] + id.bytes + body
    }
}
