import Synchronization

/// Keeps a central's link connected for Transport: each drop reported with ``dropped(_:)`` starts
/// ``PipeConnector/reconnect(_:attempts:onReconnected:)``, one drop after the other. After `attempts`
/// failures in a row (nil: never) it gives up and runs `onGiveUp`. Drops are queued one per disconnect, so
/// the queue is bounded by the connections made.
///
/// A reconnect counts as a success once the pipe is established on it. Without `awaitingEstablishment` that
/// is when the link connects. With it (a pipe with end-to-end keys, until its handshake is done) only
/// ``established()`` says so: a connection the peer ends before is one more failure in a row, so the
/// backoff grows and `attempts` bounds the tries. A peripheral that refuses this central (its handshake
/// backoff, PROTOCOL.md 5.7) says nothing but ends the connection: without this the central would connect
/// again at once, forever.
public final class Reconnector: Sendable {
    private let drops = AsyncStream<String>.makeStream()
    private let ending = Atomic<Bool>(false)
    private let gaveUp = Atomic<Bool>(false)
    /// Drops reported minus reconnects made: 0 while the link is up.
    private let down = Atomic<Int>(0)
    /// The pipe is established: a connection counts as a success once it is made.
    private let isEstablished: Atomic<Bool>
    /// Failures in a row since the pipe was last established on a connection.
    private let failures = Atomic<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Failures in a row before giving up (nil: never).
    public let attempts: Int?

    public init(
        _ connector: PipeConnector, link: any CentralLink, attempts: Int?, awaitingEstablishment: Bool = false,
        onReconnected: @escaping @Sendable (String) -> Void = { _ in }, onGiveUp: @escaping @Sendable () async -> Void
    ) {
        self.attempts = attempts
        isEstablished = Atomic(!awaitingEstablishment)
        task.withLock {
            $0 = Task { [self] in
                for await reason in drops.stream {
                    if ending.load(ordering: .relaxed) { return }
                    // A connection the pipe was not established on failed.
                    let before = isEstablished.load(ordering: .relaxed) ? 0 : failures.add(1, ordering: .relaxed).newValue
                    connector.options.note(.reconnect, "the link dropped (\(reason)); reconnecting")
                    let back = await connector.reconnect(link, attempts: attempts, failedBefore: before) { peer in
                        self.down.subtract(1, ordering: .relaxed)
                        onReconnected(peer)
                    }
                    guard let back else {
                        if Task.isCancelled { return }
                        gaveUp.store(true, ordering: .relaxed)
                        await onGiveUp()
                        return
                    }
                    failures.store(isEstablished.load(ordering: .relaxed) ? 0 : back, ordering: .relaxed)
                }
            }
        }
    }

    /// The pipe is established (its end-to-end handshake is done): from now on a connection counts as a success
    /// once it is made, and the failures so far are forgotten.
    public func established() {
        isEstablished.store(true, ordering: .relaxed)
        failures.store(0, ordering: .relaxed)
    }

    /// The pipe must be established again (its peer forgot the end-to-end session, and a new handshake runs):
    /// until ``established()``, a connection the peer ends counts as a failure, as before the first handshake.
    public func awaitEstablishment() {
        isEstablished.store(false, ordering: .relaxed)
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
