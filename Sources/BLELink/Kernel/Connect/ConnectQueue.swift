import Backpressure
import Synchronization

/// One LE connection creation at a time per adapter. Linux takes one pending LE Create Connection per
/// controller: `hci_connect_le` answers EBUSY while another is pending, and mgmt's Start Discovery (a scan for
/// a name) is refused while another runs. Every central of this process that scans for and connects a peer
/// on an adapter, on either backend, goes through that adapter's queue.
///
/// Callers take turns first come, first served. A turn lasts as long as the caller's attempt, which must bound
/// itself (its connect timeout): a peer that never answers holds the others back only for its own attempt.
/// Cancelling a caller that waits removes it from the queue. What comes after creation (GATT setup,
/// transfers) runs outside the queue, so connected peers never wait for one still connecting.
///
/// ```swift
/// let queue = ConnectQueue.shared(for: adapter.name)            // "hci0"
/// let connection = try await queue.run { try await connectOnce(within: .seconds(20)) }
/// ```
public final class ConnectQueue: Sendable {
    private let turn = CreditPool(capacity: 1)
    private static let queues = Mutex<[String: ConnectQueue]>([:])

    /// A queue of its own (tests); the product uses ``shared(for:)``.
    public init() {}

    /// The process-wide queue of `adapter`: "hciN" (the kernel backend, and bluetoothd on the system bus), or
    /// another bluetoothd's bus address and "hciN".
    public static func shared(for adapter: String) -> ConnectQueue {
        queues.withLock { queues in
            if let queue = queues[adapter] { return queue }
            let queue = ConnectQueue()
            queues[adapter] = queue
            return queue
        }
    }

    /// Callers waiting for their turn now.
    public var waiting: Int { turn.waitingCount }

    /// Runs `attempt` once no other attempt of this queue runs, and returns what it returned. The turn passes
    /// on as soon as `attempt` returns or throws. Returns nil, without running `attempt`, when the calling
    /// task is cancelled while it waits.
    public func run<T, E: Error>(_ attempt: () async throws(E) -> T) async throws(E) -> T? {
        do {
            try await turn.acquire()
        } catch {
            return nil
        }
        defer { turn.release() }
        return try await attempt()
    }
}
