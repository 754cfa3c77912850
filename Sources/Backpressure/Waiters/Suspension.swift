/// Suspends the current task on a waiter registered by `register`, resuming it with `cancelledValue` when the
/// task is cancelled while (or before) waiting.
///
/// `register` runs under the owner's lock: it returns a value to resume with at once, or registers the
/// continuation under `id` and returns nil. `cancel` removes the waiter `id` under the owner's lock and
/// returns its continuation if it was still waiting. Together they make registration and cancellation
/// race-free: a cancelled task never stays registered and is never resumed twice.
func suspend<Value: Sendable>(
    id: UInt64,
    cancelledValue: Value,
    register: (CheckedContinuation<Value, Never>) -> Value?,
    cancel: @Sendable (UInt64) -> CheckedContinuation<Value, Never>?
) async -> Value {
    await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            if let immediate = register(continuation) { continuation.resume(returning: immediate) }
        }
    } onCancel: {
        cancel(id)?.resume(returning: cancelledValue)
    }
}
