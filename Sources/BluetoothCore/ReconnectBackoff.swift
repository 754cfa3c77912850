/// Exponential backoff between connection attempts: `initial`, doubled per failure, capped at `maximum`.
public struct ReconnectBackoff: Sendable, Equatable {
    /// The wait after the first failure.
    public var initial: Duration
    /// The longest wait between two attempts.
    public var maximum: Duration
    /// Attempts in total (the first one included) before giving up.
    public var attempts: Int

    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(8), attempts: Int = 5) {
        self.initial = initial
        self.maximum = maximum
        self.attempts = attempts
    }

    /// The wait after `failures` consecutive failures: zero for none, `initial` for one, then doubled per
    /// failure up to `maximum`.
    public func delay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = initial
        for _ in 1..<min(failures, 64) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}

/// An error that says whether another attempt may fix it: a backend's error conforms so that a connector
/// retries its transient failures without knowing the backend.
public protocol TransientError: Error {
    /// True for failures that another attempt may fix (a timeout, a peer not yet advertising, a busy link);
    /// false for what only the user can fix.
    var isTransient: Bool { get }
}
