import Backpressure
import Synchronization

/// One LE connection creation (scan for a name, then connect) at a time per adapter, first come first served:
/// Linux refuses a second pending one with EBUSY. A turn lasts the caller's own bounded attempt; a caller
/// cancelled while waiting leaves the queue. What follows creation runs outside it.
///
/// ```swift
/// let connection = try await ConnectQueue.shared(for: "hci0").run { try await connectOnce(within: .seconds(20)) }
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
