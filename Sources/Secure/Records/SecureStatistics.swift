/// Counts of a secure session: what was sealed and opened, and each kind of rejected message.
public struct SecureStatistics: Sendable, Equatable {
    public var sealed = 0
    public var opened = 0
    /// Replays and reorders older than the replay window.
    public var rejectedReplays = 0
    /// Messages whose authentication tag failed (changed in transit or sealed under another key).
    public var rejectedTampered = 0
    /// Records too short, too large or of an unknown type.
    public var rejectedMalformed = 0

    public init() {}

    /// Every rejected message.
    public var rejected: Int { rejectedReplays + rejectedTampered + rejectedMalformed }
}
