/// Bounds of an exchange: body sizes and how many answered requests the journal keeps.
public struct ExchangeLimits: Sendable, Equatable {
    /// The largest request body (default 256 KiB).
    public var maximumRequestSize: Int
    /// The largest response body; a command printing more fails (default 256 KiB).
    public var maximumResponseSize: Int
    /// How many answered requests the journal keeps; the oldest are forgotten beyond it (default 10000).
    public var retainedRequests: Int

    public init(maximumRequestSize: Int = 256 << 10, maximumResponseSize: Int = 256 << 10, retainedRequests: Int = 10_000) {
        self.maximumRequestSize = maximumRequestSize
        self.maximumResponseSize = maximumResponseSize
        self.retainedRequests = retainedRequests
    }

    /// Envelope overhead on top of a body: header, status, exit code, id.
    public static let envelopeOverhead = 5 + RequestID.maximumLength
}
