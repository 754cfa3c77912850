/// The time source of a ``Transport``: `now` as a duration since its start, and sleeping until such a time.
///
/// Wraps any `Clock<Duration>` (``ContinuousClock`` by default; tests inject a manual clock).
struct TransportClock: Sendable {
    let now: @Sendable () -> Duration
    let sleepUntil: @Sendable (Duration) async throws -> Void

    init<C: Clock<Duration>>(_ clock: C) {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleepUntil = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }
}
