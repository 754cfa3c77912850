

/// Runs `operation` until it returns or `timeout` passes: nil then, after the operation was cancelled and
/// ended (it must end promptly when cancelled, as BoundedAsyncQueue's `next()` does).
func withTimeout<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}
