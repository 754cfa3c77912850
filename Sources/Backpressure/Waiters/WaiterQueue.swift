internal import DequeModule

/// Suspended tasks in arrival order, each with an id (to remove it on cancellation) and a payload.
///
/// Not thread-safe by itself: it lives inside the `Mutex` of the primitive that owns it. Continuations are
/// resumed by the owner after it released its lock.
struct WaiterQueue<Payload, Value: Sendable> {
    struct Waiter {
        let id: UInt64
        var payload: Payload
        let continuation: CheckedContinuation<Value, Never>
    }

    private var waiters: Deque<Waiter> = []

    var isEmpty: Bool { waiters.isEmpty }
    var count: Int { waiters.count }
    var first: Waiter? { waiters.first }

    mutating func append(id: UInt64, payload: Payload, continuation: CheckedContinuation<Value, Never>) {
        waiters.append(Waiter(id: id, payload: payload, continuation: continuation))
    }

    mutating func popFirst() -> Waiter? { waiters.popFirst() }

    /// Removes the waiter with `id`, if it is still waiting.
    mutating func remove(id: UInt64) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index)
    }

    mutating func removeAll() -> [Waiter] {
        defer { waiters.removeAll() }
        return Array(waiters)
    }
}

/// How a waiter was woken: its turn came, or it was cancelled, or the primitive failed it.
enum WakeUp: Sendable {
    case granted
    case cancelled
    case failed(any Error)

    /// Returns normally for `.granted`, throws otherwise.
    func get() throws {
        switch self {
        case .granted: return
        case .cancelled: throw CancellationError()
        case let .failed(error): throw error
        }
    }
}
