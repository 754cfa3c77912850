/// The initiator's first handshake message: `01 01 mode ephemeral[32]` (35 bytes), sent as a request.
public struct ClientHello: Sendable, Equatable {
    static let count = 3 + SecureWire.keySize

    public var mode: SecureMode
    public var ephemeralPublicKey: [UInt8]

    public init(mode: SecureMode, ephemeralPublicKey: [UInt8]) {
        self.mode = mode
        self.ephemeralPublicKey = ephemeralPublicKey
    }

    public init(decoding bytes: ArraySlice<UInt8>) throws(SecureError) {
        let body = try SecureWire.body(of: bytes, type: .clientHello, count: Self.count, name: "ClientHello")
        guard let mode = SecureMode(rawValue: body[body.startIndex]) else {
            throw .handshakeFailed("ClientHello names unknown mode \(body[body.startIndex])")
        }
        self.mode = mode
        ephemeralPublicKey = Array(body.dropFirst())
    }

    public func encode(into out: inout [UInt8]) {
        out += [SecureWire.version, SecureWire.MessageType.clientHello.rawValue, mode.rawValue]
        out += ephemeralPublicKey
    }
}
