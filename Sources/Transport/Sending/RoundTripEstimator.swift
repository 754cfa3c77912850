/// Smoothed round-trip time and retransmission timeout (RFC 6298 style) from acknowledgement samples.
struct RoundTripEstimator: Sendable {
    private var smoothed: Duration?
    private var variation: Duration = .zero
    let initial: Duration
    let minimum: Duration
    let maximum: Duration

    init(initial: Duration, minimum: Duration, maximum: Duration) {
        self.initial = initial
        self.minimum = minimum
        self.maximum = maximum
    }

    mutating func addSample(_ sample: Duration) {
        guard let current = smoothed else {
            smoothed = sample
            variation = sample / 2
            return
        }
        let difference = current > sample ? current - sample : sample - current
        variation = (variation * 3 + difference) / 4
        smoothed = (current * 7 + sample) / 8
    }

    /// The timeout after `backoff` consecutive expiries (doubling each time, capped at the maximum).
    func timeout(backoff: Int = 0) -> Duration {
        let base = smoothed.map { $0 + variation * 4 } ?? initial
        var value = min(max(base, minimum), maximum)
        for _ in 0 ..< min(backoff, 16) where value < maximum { value = min(value * 2, maximum) }
        return value
    }
}
