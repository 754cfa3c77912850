/// Why a backpressure primitive refused an operation.
public enum BackpressureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A request for more credits than the pool can ever hold; it would wait forever.
    case creditRequestExceedsCapacity(requested: Int, capacity: Int)
    /// A request for zero or a negative number of credits.
    case invalidCreditCount(Int)
    /// The queue was finished: nothing more can be pushed.
    case queueFinished

    public var description: String {
        switch self {
        case let .creditRequestExceedsCapacity(requested, capacity):
            "a request for \(requested) credits exceeds the pool's capacity of \(capacity)"
        case let .invalidCreditCount(count): "a credit count must be positive, got \(count)"
        case .queueFinished: "the queue is finished"
        }
    }
}
