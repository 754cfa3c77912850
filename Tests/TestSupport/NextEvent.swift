/// The next of `events` (what a product hook reported, fed to the stream's continuation), or nil once they
/// ended or `patience` passed. A test awaits the event itself instead of polling a count against a short
/// deadline, which a loaded host overruns while the product is right; `patience` only stops a hang.
///
/// ```swift
/// let (refusals, refused) = AsyncStream.makeStream(of: String.self)
/// options.onRefusedHandshake = { peer, _ in refused.yield(peer) }
/// #expect(await nextEvent(of: refusals) == "unix:/tmp/mp.sock")
/// ```
public func nextEvent<Element: Sendable>(of events: AsyncStream<Element>, patience: Duration = hangGuard) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask { await events.first { _ in true } }
        group.addTask {
            try? await Task.sleep(for: patience)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}
