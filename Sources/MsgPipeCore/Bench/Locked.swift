import Synchronization

/// A value behind a lock, shared by reference between tasks (a `Mutex` cannot be captured by a closure).
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
