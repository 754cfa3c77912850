import Backpressure
import Synchronization

/// A one-way signal a test awaits without polling: `fire` from any task; `wait()` returns once per firing.
struct Signal {
    let fire: @Sendable () -> Void
    private var firings: AsyncStream<Void>.Iterator

    init() {
        let (events, continuation) = AsyncStream.makeStream(of: Void.self)
        fire = { continuation.yield() }
        firings = events.makeAsyncIterator()
    }

    mutating func wait() async { _ = await firings.next() }
}

/// Starts a task that sends `packet` through `gate` into `bearer`, firing `refused` on every refusal.
func startSender(
    _ packet: Int, gate: ReadinessGate, bearer: FakeBearer, refused: @escaping @Sendable () -> Void
) -> Task<Void, any Error> {
    Task {
        try await gate.send {
            let accepted = bearer.trySend(packet)
            if !accepted { refused() }
            return accepted
        }
    }
}

/// A fake bearer with a fixed number of free slots: a send is refused ("queue full") when none is free.
final class FakeBearer: Sendable {
    private struct State {
        var freeSlots: Int
        var accepted: [Int] = []
        var attempts = 0
    }

    private let state: Mutex<State>

    init(freeSlots: Int) { state = Mutex(State(freeSlots: freeSlots)) }

    /// Accepts `packet` if a slot is free.
    func trySend(_ packet: Int) -> Bool {
        state.withLock { state in
            state.attempts += 1
            guard state.freeSlots > 0 else { return false }
            state.freeSlots -= 1
            state.accepted.append(packet)
            return true
        }
    }

    /// Frees `count` slots (the radio sent what it held).
    func free(_ count: Int) { state.withLock { $0.freeSlots += count } }

    var accepted: [Int] { state.withLock { $0.accepted } }
    var attempts: Int { state.withLock { $0.attempts } }
}

/// A value shared by test tasks, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    func update<Result: Sendable>(_ body: (inout Value) -> Result) -> Result { state.withLock { body(&$0) } }
    var value: Value { state.withLock { $0 } }
}
