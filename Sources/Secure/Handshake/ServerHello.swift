/// The responder's answer: `01 02 mode ephemeral[32] confirmation[32]` (67 bytes), the response to ClientHello.
/// The confirmation is the server's key-confirmation HMAC (PROTOCOL.md 6.3).
public struct ServerHello: Sendable, Equatable {
    static let unconfirmedCount = 3 + SecureWire.keySize
    static let count = unconfirmedCount + SecureWire.confirmationSize

    public var mode: SecureMode
    public var ephemeralPublicKey: [UInt8]
    public var confirmation: [UInt8]

    public init(mode: SecureMode, ephemeralPublicKey: [UInt8], confirmation: [UInt8]) {
        self.mode = mode
        self.ephemeralPublicKey = ephemeralPublicKey
        self.confirmation = confirmation
    }

    public init(decoding bytes: ArraySlice<UInt8>) throws(SecureError) {
        let body = try SecureWire.body(of: bytes, type: .serverHello, count: Self.count, name: "ServerHello")
        guard let mode = SecureMode(rawValue: body[body.startIndex]) else {
            throw .handshakeFailed("ServerHello names unknown mode \(body[body.startIndex])")
        }
        self.mode = mode
        ephemeralPublicKey = Array(body.dropFirst().prefix(SecureWire.keySize))
        confirmation = Array(body.suffix(SecureWire.confirmationSize))
    }

    /// The bytes the transcript hash covers: everything but the confirmation.
    func encodeUnconfirmed(into out: inout [UInt8]) {
        out += [SecureWire.version, SecureWire.MessageType.serverHello.rawValue, mode.rawValue]
        out += ephemeralPublicKey
    }

    public func encode(into out: inout [UInt8]) {
        encodeUnconfirmed(into: &out)
        out += confirmation
    }
}
