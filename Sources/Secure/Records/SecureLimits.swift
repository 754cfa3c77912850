/// Size limits of the secure layer; a sealed message over them is refused before any crypto.
public struct SecureLimits: Sendable, Equatable {
    /// The largest plaintext sealed or opened (default 1 MiB).
    public var maximumPlaintextSize: Int

    public init(maximumPlaintextSize: Int = 1 << 20) {
        self.maximumPlaintextSize = maximumPlaintextSize
    }

    /// What sealing adds to each message: header and tag (PROTOCOL.md 6.4).
    public static let recordOverhead = SealedRecord.overhead
}
