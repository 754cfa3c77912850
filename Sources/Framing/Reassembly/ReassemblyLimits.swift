/// The bounds every decoder enforces, so no peer input can make it hold unbounded memory.
public struct ReassemblyLimits: Equatable, Sendable {
    /// The largest message body accepted (msgpipe checks the announced length before buffering anything).
    public var maximumMessageSize: Int
    /// The most messages assembled at once (msgpipe has 4 channels, so at most 4 count).
    public var maximumMessagesInProgress: Int
    /// The most bytes held for partial messages at once.
    public var maximumBufferedBytes: Int
    /// A partial message that receives nothing for longer than this is dropped.
    public var staleTimeout: Duration

    /// Limits; the defaults suit a phone-class peer: 16 MiB messages, 4 in progress, 64 MiB, 30 s.
    public init(
        maximumMessageSize: Int = 16 << 20, maximumMessagesInProgress: Int = 4,
        maximumBufferedBytes: Int = 64 << 20, staleTimeout: Duration = .seconds(30)
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.maximumMessagesInProgress = maximumMessagesInProgress
        self.maximumBufferedBytes = maximumBufferedBytes
        self.staleTimeout = staleTimeout
    }
}
