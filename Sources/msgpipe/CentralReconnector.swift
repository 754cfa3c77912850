import GATT
import BLELink
import Synchronization

extension LinkOptions {
    /// How long a central waits after a drop before its first reconnect attempt. A Linux peripheral re-arms its
    /// advertising right after the disconnect (advertising off, parameters, on: about a millisecond); in the
    /// lab's emulated controllers a Create Connection that lands in that moment fails at once, and Linux 6.1
    /// then kept the failed attempt pending, so that no later connect to that peer got through (docs/LAB.md,
    /// check 13b, stop 22). A radio keeps such an attempt pending until the peer advertises; the pause costs a
    /// reconnect little next to the resume window's minutes.
    static let settleAfterDrop: Duration = .milliseconds(250)

    /// Brings a central's dropped link back: after ``settleAfterDrop``, then with exponential backoff
    /// (``ReconnectBackoff``); false after `attempts` failures in a row (nil: keeps trying until the task is
    /// cancelled).
    func reconnect(
        _ peerLink: PeerLink, attempts: Int?, note: (String) -> Void, onReconnected: (String) -> Void = { _ in }
    ) async -> Bool {
        let backoff = ReconnectBackoff(attempts: attempts ?? .max)
        var failures = 0
        do { try await Task.sleep(for: Self.settleAfterDrop) } catch { return false }
        while attempts.map({ failures < $0 }) ?? true {
            let delay = backoff.delay(afterFailures: failures)
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return false }
            }
            guard !Task.isCancelled else { return false }
            do {
                let peer = try await connect(peerLink)
                note("reconnected to \(peer)")
                onReconnected(peer)
                return true
            } catch {
                failures += 1
                note("reconnect attempt \(failures)\(attempts.map { " of \($0)" } ?? "") failed: \(error)")
            }
        }
        return false
    }
}

/// Keeps a central's GATT link connected for Transport: each drop reported with ``dropped(_:)`` starts
/// ``LinkOptions/reconnect(_:attempts:note:onReconnected:)``, one drop after the other; after `attempts`
/// failures in a row it gives up and runs `onGiveUp`. Shared by `send` (the central sends) and
/// `listen --to` (the central receives).
final class CentralReconnector: Sendable {
    /// One element per disconnect of the link, consumed in order: bounded by the connections made.
    private let drops = AsyncStream<String>.makeStream()
    private let ending = Atomic<Bool>(false)
    private let gaveUp = Atomic<Bool>(false)
    /// Drops reported minus reconnects made: 0 while the link is up.
    private let down = Atomic<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(
        link: LinkOptions, peerLink: PeerLink, attempts: Int?, note: @escaping @Sendable (String) -> Void,
        onReconnected: @escaping @Sendable (String) -> Void = { _ in }, onGiveUp: @escaping @Sendable () async -> Void
    ) {
        task.withLock {
            $0 = Task { [self] in
                for await reason in drops.stream {
                    if ending.load(ordering: .relaxed) { return }
                    note("the link dropped (\(reason)); reconnecting")
                    let back = await link.reconnect(peerLink, attempts: attempts, note: note) { peer in
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
    var hasGivenUp: Bool { gaveUp.load(ordering: .relaxed) }

    /// Reports that the link dropped (from the link's events).
    func dropped(_ reason: String) {
        down.add(1, ordering: .relaxed)
        drops.continuation.yield(reason)
    }

    /// Stops reconnecting. With `grace`, a link that is up is first given up to that long to drop (so a peer
    /// that ends the connection itself, e.g. after taking its last acknowledgement, is not cut off).
    func stop(awaitingDropWithin grace: Duration? = nil) async {
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
