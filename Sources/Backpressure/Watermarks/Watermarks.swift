/// High/low watermarks with hysteresis: a producer pauses when the level reaches `high` and resumes only once
/// it fell to `low`, so it does not flap around a single threshold.
public struct Watermarks: Sendable, Equatable {
    /// What an ``update(level:)`` changed.
    public enum Transition: Sendable, Equatable {
        /// The level reached the high watermark: stop producing.
        case pause
        /// The level fell to the low watermark: produce again.
        case resume
    }

    /// Pause at or above this level.
    public let high: Int
    /// Resume at or below this level (strictly less than `high`).
    public let low: Int
    /// Whether the producer should currently hold back.
    public private(set) var isPaused = false

    /// Creates watermarks; `low` is clamped below `high` so the hysteresis band is never empty.
    public init(high: Int, low: Int) {
        self.high = high
        self.low = min(low, high - 1)
    }

    /// Reports the current level; returns the transition it caused, if any.
    public mutating func update(level: Int) -> Transition? {
        if !isPaused && level >= high {
            isPaused = true
            return .pause
        }
        if isPaused && level <= low {
            isPaused = false
            return .resume
        }
        return nil
    }
}
