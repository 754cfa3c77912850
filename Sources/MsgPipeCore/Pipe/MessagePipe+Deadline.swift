extension MessagePipe {
    /// `work`'s result, or nil once `deadline` passed first (nil deadline: waits for `work`). Past the deadline
    /// `work` is cancelled but not awaited, so a step that does not return when cancelled (a Bluetooth connect
    /// the kernel holds) cannot keep the caller past its deadline; it ends with the process at worst. Use it to
    /// bound a whole run, connecting included, where each send's own deadline bounds only the sending.
    ///
    /// ```swift
    /// let outcome = await MessagePipe.abandoning(after: .now + .seconds(30)) { await send() }
    /// ```
    public static func abandoning<Value: Sendable>(
        after deadline: ContinuousClock.Instant?, _ work: @escaping @Sendable () async -> Value
    ) async -> Value? {
        guard let deadline else { return await work() }
        let (first, arrival) = AsyncStream<Value?>.makeStream()
        let working = Task { arrival.yield(await work()) }
        let timer = Task {
            guard (try? await Task.sleep(until: deadline)) != nil else { return }
            arrival.yield(nil)
        }
        for await outcome in first {
            timer.cancel()
            if outcome == nil { working.cancel() }
            return outcome
        }
        preconditionFailure("the stream of outcomes is never finished")
    }
}
