/// Time for the ATT transaction timeout, injectable so tests run on simulated time.
public struct ATTClock: Sendable {
    /// Time since an arbitrary origin; only moves forward.
    public let now: @Sendable () -> Duration
    /// Returns once `now()` reached the deadline; throws when the task is cancelled.
    public let sleepUntil: @Sendable (Duration) async throws -> Void

    public init(now: @escaping @Sendable () -> Duration, sleepUntil: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleepUntil = sleepUntil
    }

    /// The real monotonic clock.
    public static var continuous: ATTClock {
        let clock = ContinuousClock()
        let origin = clock.now
        return ATTClock(now: { origin.duration(to: clock.now) },
                        sleepUntil: { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) })
    }
}
