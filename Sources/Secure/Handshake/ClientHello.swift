/// The initiator's first handshake message, sent as a request: `01 01 mode ephemeral[32]` (35 bytes) in
/// modes 1 and 2; `01 01 03 ephemeral[32] sealed_identity[48]` (83 bytes) in mode 3, where
/// `sealed_identity` is the client's static public key sealed to the server's identity (PROTOCOL.md 6.2).
public struct ClientHello: Sendable, Equatable {
    static let count = 3 + SecureWire.keySize
    static let announcedCount = count + IdentityAnnouncement.sealedSize

    public var mode: SecureMode
    public var ephemeralPublicKey: [UInt8]
    /// Mode 3 only: the client's public key, sealed (48 bytes); empty in the other modes.
    public var sealedIdentity: [UInt8]

    public init(mode: SecureMode, ephemeralPublicKey: [UInt8], sealedIdentity: [UInt8] = []) {
        self.mode = mode
        self.ephemeralPublicKey = ephemeralPublicKey
        self.sealedIdentity = sealedIdentity
    }

    /// Decodes a ClientHello; throws ``SecureError/handshakeFailed(_:)`` for a wrong length or an unknown mode.
    public init(decoding bytes: ArraySlice<UInt8>) throws(SecureError) {
        let announced = bytes.count >= 3 && bytes[bytes.startIndex + 2] == SecureMode.announcedIdentity.rawValue
        let body = try SecureWire.body(
            of: bytes, type: .clientHello, count: announced ? Self.announcedCount : Self.count, name: "ClientHello")
        guard let mode = SecureMode(rawValue: body[body.startIndex]) else {
            throw .handshakeFailed("ClientHello names unknown mode \(body[body.startIndex])")
        }
        self.mode = mode
        ephemeralPublicKey = Array(body.dropFirst().prefix(SecureWire.keySize))
        sealedIdentity = Array(body.dropFirst(1 + SecureWire.keySize))
    }

    public func encode(into out: inout [UInt8]) {
        out += [SecureWire.version, SecureWire.MessageType.clientHello.rawValue, mode.rawValue]
        out += ephemeralPublicKey
        out += sealedIdentity
    }
}
