/// How one message is sent.
public struct SendOptions: Sendable, Equatable {
    /// What the message is: plain, a request expecting a response, or the response to a request.
    public var kind: MessageKind
    /// Deflate the body when that makes it smaller.
    public var compress: Bool
    /// Absolute time (on the endpoint's clock) by which the peer must have acknowledged the message; for a
    /// request, by which the response must have arrived.
    public var deadline: Duration?

    public init(kind: MessageKind = .message, compress: Bool = false, deadline: Duration? = nil) {
        self.kind = kind
        self.compress = compress
        self.deadline = deadline
    }
}

/// The role of a message in request/response.
public enum MessageKind: Sendable, Equatable {
    case message
    case request
    /// Answers the request whose message id is given.
    case response(to: UInt32)
}

/// Identifies one submitted message on the sending side (local; the wire message id is assigned when sent).
public struct SubmissionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}
