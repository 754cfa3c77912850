import Synchronization

/// Keeps a central's link connected for Transport: each drop reported with ``dropped(_:)`` starts
/// ``PipeConnector/reconnect(_:attempts:onReconnected:)``, one drop after the other. After `attempts`
/// failures in a row (nil: never) it gives up and runs `onGiveUp`. Drops are queued one per disconnect, so
/// the queue is bounded by the connections made.
public final class Reconnector: Sendable {
    private let drops = AsyncStream<String>.makeStream()
    private let ending = Atomic<Bool>(false)
    private let gaveUp = Atomic<Bool>(false)
    /// Drops reported minus reconnects made: 0 while the link is up.
    private let down = Atomic<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Failures in a row before giving up (nil: never).
    public let attempts: Int?

    public init(
        _ connector: PipeConnector, link: any CentralLink, attempts: Int?,
        onReconnected: @escaping @Sendable (String) -> Void = { _ in }, onGiveUp: @escaping @Sendable () async -> Void
    ) {
        self.attempts = attempts
        task.withLock {
            $0 = Task { [self] in
                for await reason in drops.stream {
                    if ending.load(ordering: .relaxed) { return }
                    connector.options.note(.reconnect, "the link dropped (\(reason)); reconnecting")
                    let back = await connector.reconnect(link, attempts: attempts) { peer in
                        self.down.subtract(1, ordering: .relaxed)
                        onReconnected(peer)
                    }
                    guard back else {
                        if Task.isCancelled { return }
                        gaveUp.store(true, ordering: .relaxed)
                        await onGiveUp()
                        return
                    }
                }
            }
        }
    }

    /// True once reconnecting failed `attempts` times in a row.
    public var hasGivenUp: Bool { gaveUp.load(ordering: .relaxed) }

    /// Reports that the link dropped (from the link's events).
    public func dropped(_ reason: String) {
        down.add(1, ordering: .relaxed)
        drops.continuation.yield(reason)
    }

    /// Stops reconnecting. With `grace`, a link that is up is first given up to that long to drop (so a peer
    /// that ends the connection itself, e.g. after taking its last acknowledgement, is not cut off).
    public func stop(awaitingDropWithin grace: Duration? = nil) async {
        ending.store(true, ordering: .relaxed)
        let task = task.withLock { $0 }
        if let grace, let task, down.load(ordering: .relaxed) == 0 {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await task.value }
                group.addTask { try? await Task.sleep(for: grace) }
                await group.next()
                task.cancel()  // ends its wait for a drop
                group.cancelAll()
            }
        }
        task?.cancel()
        drops.continuation.finish()
    }
}
