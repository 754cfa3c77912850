/// A refusal during the handshake: `01 04 reason` (3 bytes), unauthenticated (there is no key yet).
public struct HandshakeReject: Sendable, Equatable {
    static let count = 3

    public var alert: SecureAlert

    public init(_ alert: SecureAlert) {
        self.alert = alert
    }

    public init(decoding bytes: ArraySlice<UInt8>) throws(SecureError) {
        let start = bytes.startIndex
        guard bytes.count == Self.count, bytes[start] == SecureWire.version,
            bytes[start + 1] == SecureWire.MessageType.reject.rawValue
        else { throw .handshakeFailed("malformed Reject of \(bytes.count) bytes") }
        guard let alert = SecureAlert(rawValue: bytes[start + 2]) else {
            throw .handshakeFailed("Reject names unknown reason \(bytes[start + 2])")
        }
        self.alert = alert
    }

    public func encode(into out: inout [UInt8]) {
        out += [SecureWire.version, SecureWire.MessageType.reject.rawValue, alert.rawValue]
    }

    /// The encoded bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }
}
