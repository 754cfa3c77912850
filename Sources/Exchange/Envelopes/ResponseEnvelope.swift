import Framing

/// A response: `01 52 status exit_code id_length id body` (0x52 is 'R'). `exit_code` is the command's exit
/// status (128 + signal when killed, 0 when it did not run).
public struct ResponseEnvelope: Sendable, Equatable {
    static let type: UInt8 = 0x52

    public var id: RequestID
    public var status: ResponseStatus
    public var exitCode: UInt8
    public var body: [UInt8]

    public init(id: RequestID, status: ResponseStatus, exitCode: UInt8 = 0, body: [UInt8]) {
        self.id = id
        self.status = status
        self.exitCode = exitCode
        self.body = body
    }

    public init(decoding bytes: some Collection<UInt8>) throws(ExchangeError) {
        var reader = ByteReader(Array(bytes)[...])
        guard try reader.readEnvelopeByte("version") == envelopeVersion,
            try reader.readEnvelopeByte("type") == Self.type
        else { throw .malformedEnvelope("not a version 1 response envelope") }
        let statusByte = try reader.readEnvelopeByte("status")
        guard let status = ResponseStatus(rawValue: statusByte) else {
            throw .malformedEnvelope("unknown status \(statusByte)")
        }
        self.status = status
        exitCode = try reader.readEnvelopeByte("exit code")
        id = try reader.readRequestID()
        body = Array(reader.readRemaining())
    }

    public func encoded() -> [UInt8] {
        [envelopeVersion, Self.type, status.rawValue, exitCode, UInt8(id.bytes.count)] + id.bytes + body
    }
}
