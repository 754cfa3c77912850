import Crypto

/// A 32-byte key both peers hold; text form `msgpipe-psk:` + 64 hex digits (`msgpipe keygen`).
public struct PreSharedKey: Sendable, Equatable {
    static let textPrefix = "msgpipe-psk"

    /// The key bytes (32).
    public let bytes: [UInt8]

    /// A new random key from the system's secure random source.
    public init() {
        bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// A key from its 32 bytes.
    public init(bytes: [UInt8]) throws(SecureError) {
        guard bytes.count == KeyText.keySize else {
            throw .invalidKey("a pre-shared key has \(KeyText.keySize) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Parses the text form (one line, as in a key file).
    public init(text: some StringProtocol) throws(SecureError) {
        try self.init(bytes: KeyText.parse(text, prefix: Self.textPrefix))
    }

    /// The text form: `msgpipe-psk:<64 hex digits>`.
    public var text: String { KeyText.format(prefix: Self.textPrefix, bytes) }
}
