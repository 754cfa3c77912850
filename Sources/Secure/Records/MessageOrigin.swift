/// Where a queued message comes from, sealed with it (record type 0x12, PROTOCOL.md 6.4): the sender's
/// outbox session and the message's id in it. It stays the same when a sender that restarted sends the
/// message again over a new Transport session, so a receiver's journal recognises the resend.
public struct MessageOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The outbox's session (never 0).
    public var session: UInt64
    /// The message's id in that session.
    public var id: UInt32

    public init(session: UInt64, id: UInt32) {
        self.session = session
        self.id = id
    }

    /// Its 12 bytes at the start of a type 0x12 record's plaintext: `session[8] id[4]`, big-endian.
    static let encodedCount = 12

    var encoded: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: session >> (56 - 8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: id >> (24 - 8 * $0)) }
    }

    /// Reads the origin at the start of `plaintext`; nil when it is shorter than 12 bytes or names session 0.
    static func decode(_ plaintext: [UInt8]) -> (origin: MessageOrigin, body: [UInt8])? {
        guard plaintext.count >= encodedCount else { return nil }
        let session = plaintext[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let id = plaintext[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard session != 0 else { return nil }
        return (MessageOrigin(session: session, id: id), Array(plaintext[encodedCount...]))
    }

    public var description: String {
        let hex = String(session, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "/\(id)"
    }
}
