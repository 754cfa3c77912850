/// A sender's session and the id of its next message (PROTOCOL.md 3.9): a new process that gives the same goes on
/// where an earlier one stopped. Ids follow submission order unless a message fails before it started.
///
/// ```swift
/// var options = TransportOptions()
/// options.senderSession = SenderSession(id: 0x0123_4567_89ab_cdef, nextMessageID: 42)
/// let transport = Transport(link: link, options: options)   // its first message goes as id 42
/// ```
public struct SenderSession: Sendable, Hashable, CustomStringConvertible {
    /// The session (never 0: a 0 is taken as 1).
    public var id: UInt64
    /// The id of the next message (never 0: ids wrap from 2^32 - 1 to 1).
    public var nextMessageID: UInt32

    public init(id: UInt64, nextMessageID: UInt32 = 1) {
        self.id = id == 0 ? 1 : id
        self.nextMessageID = nextMessageID == 0 ? 1 : nextMessageID
    }

    /// A new random session, ids from 1.
    public static func random() -> SenderSession { SenderSession(id: .random(in: 1 ... .max)) }

    public var description: String {
        let hex = String(id, radix: 16)
        return "session \(String(repeating: "0", count: 16 - hex.count) + hex), next id \(nextMessageID)"
    }
}
