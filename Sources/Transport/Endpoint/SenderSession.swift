/// Where a sender's stream of message ids goes on (PROTOCOL.md 3.9): its session and the id its next message
/// gets. A sender that keeps its messages on disk (MsgPipeStore's `MessageOutbox`) gives the same session and
/// ids after a restart, so a receiver's delivery journal recognises a message it already kept.
///
/// With a `SenderSession`, messages get ids in submission order from ``nextMessageID`` on, as long as none fails
/// before it started (a failed one leaves its id to the next message).
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
