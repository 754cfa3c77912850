/// Constants of the secure layer's wire format (PROTOCOL.md section 6).
enum SecureWire {
    /// The first byte of every secure message.
    static let version: UInt8 = 1
    static let keySize = 32
    static let confirmationSize = 32

    /// The second byte: what the message is.
    enum MessageType: UInt8 {
        case clientHello = 0x01
        case serverHello = 0x02
        case clientFinish = 0x03
        case reject = 0x04
        case sealed = 0x10
        case sealedAlert = 0x11
        /// Data that names its origin (a queued message): `session[8] id[4]` then the body, sealed together.
        case sealedWithOrigin = 0x12
    }

    /// Checks the version and type bytes and the exact length; returns the bytes after the two-byte header.
    static func body(
        of bytes: ArraySlice<UInt8>, type: MessageType, count: Int, name: String
    ) throws(SecureError) -> ArraySlice<UInt8> {
        guard bytes.count >= 2 else { throw .handshakeFailed("\(name) of \(bytes.count) bytes is truncated") }
        let start = bytes.startIndex
        guard bytes[start] == version else { throw .unsupportedVersion(bytes[start]) }
        if bytes[start + 1] == MessageType.reject.rawValue {
            throw .refusedByPeer(try HandshakeReject(decoding: bytes).alert)
        }
        guard bytes[start + 1] == type.rawValue else {
            throw .handshakeFailed("expected \(name), got message type \(bytes[start + 1])")
        }
        guard bytes.count == count else {
            throw .handshakeFailed("\(name) has \(bytes.count) bytes, expected \(count)")
        }
        return bytes.dropFirst(2)
    }
}
