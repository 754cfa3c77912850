/// A sealed message on the wire: `01 type counter[8, big-endian] ciphertext tag[16]` (PROTOCOL.md 6.4).
/// The 10-byte header is the AEAD's additional data; the nonce is a 4-byte direction prefix + counter.
struct SealedRecord {
    static let headerCount = 10
    static let tagCount = 16
    static let overhead = headerCount + tagCount

    var type: SecureWire.MessageType
    var counter: UInt64
    var ciphertext: ArraySlice<UInt8>
    var tag: ArraySlice<UInt8>
    var header: ArraySlice<UInt8>

    init(decoding bytes: ArraySlice<UInt8>, maximumPlaintextSize: Int) throws(SecureError) {
        guard bytes.count >= Self.overhead else {
            throw .malformedRecord("sealed record of \(bytes.count) bytes is shorter than \(Self.overhead)")
        }
        let start = bytes.startIndex
        guard bytes[start] == SecureWire.version else { throw .unsupportedVersion(bytes[start]) }
        guard let type = SecureWire.MessageType(rawValue: bytes[start + 1]),
            type == .sealed || type == .sealedAlert || type == .sealedWithOrigin
        else { throw .malformedRecord("message type \(bytes[start + 1]) is not a sealed record") }
        guard bytes.count - Self.overhead <= maximumPlaintextSize else {
            throw .messageTooLarge(size: bytes.count - Self.overhead, limit: maximumPlaintextSize)
        }
        self.type = type
        counter = bytes[(start + 2)..<(start + 10)].reduce(0) { $0 << 8 | UInt64($1) }
        header = bytes[start..<(start + Self.headerCount)]
        ciphertext = bytes[(start + Self.headerCount)..<(bytes.endIndex - Self.tagCount)]
        tag = bytes.suffix(Self.tagCount)
    }

    /// True when `bytes` has a sealed record's shape (version, a record type, at least the overhead): what a
    /// peer sends once its handshake is done, never a handshake message.
    static func hasShape(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= overhead, bytes[0] == SecureWire.version, let type = SecureWire.MessageType(rawValue: bytes[1])
        else { return false }
        return type == .sealed || type == .sealedAlert || type == .sealedWithOrigin
    }

    static func header(type: SecureWire.MessageType, counter: UInt64) -> [UInt8] {
        [SecureWire.version, type.rawValue] + bigEndianBytes(counter)
    }

    static func nonce(direction: UInt32, counter: UInt64) -> [UInt8] {
        bigEndianBytes(UInt64(direction)).suffix(4) + bigEndianBytes(counter)
    }

    private static func bigEndianBytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
