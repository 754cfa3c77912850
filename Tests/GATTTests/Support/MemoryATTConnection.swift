import Backpressure
@testable import GATT
import Synchronization

/// Two connected in-memory ATT bearers: whole PDUs through Backpressure's bounded queues, sends paced by
/// Backpressure's readiness gate (a full peer inbox is "not ready" until the peer takes a PDU), closing one
/// end is a disconnect at the other. What the GATT server, client and GATTLink need, with no socket.
func bearerPair(receiveCapacity: Int = 16) -> (MemoryATTConnection, MemoryATTConnection) {
    let shared = MemoryATTConnection.Shared(capacity: receiveCapacity)
    return (MemoryATTConnection(shared, side: 0), MemoryATTConnection(shared, side: 1))
}

/// One end of a ``bearerPair(receiveCapacity:)``.
final class MemoryATTConnection: ATTConnection {
    /// What both ends share: an inbox and a readiness gate per side.
    final class Shared: Sendable {
        let inboxes: [BoundedAsyncQueue<ATTBearerEvent, Never>]
        /// The gate side `i`'s sends wait on: signalled when the other side takes a PDU.
        let gates = [ReadinessGate(), ReadinessGate()]
        let closed = Mutex([false, false])

        init(capacity: Int) {
            inboxes = [BoundedAsyncQueue(capacity: capacity), BoundedAsyncQueue(capacity: capacity)]
        }
    }

    private let shared: Shared
    private let side: Int
    private var peer: Int { 1 - side }

    init(_ shared: Shared, side: Int) {
        self.shared = shared
        self.side = side
    }

    deinit { close() }

    /// What ``linkSecurity`` reports (nil: cannot tell, as a UNIX socket); a test raises it as pairing would.
    let reportedSecurity = Mutex<ATTLinkSecurity?>(nil)
    var linkSecurity: ATTLinkSecurity? { reportedSecurity.withLock { $0 } }

    func trySend(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool {
        do { return try shared.gates[side].trySend { try attempt(pdu) } } catch { throw mapped(error) }
    }

    func send(_ pdu: ArraySlice<UInt8>) async throws(ATTError) {
        do { try await shared.gates[side].send { try attempt(pdu) } } catch { throw mapped(error) }
    }

    var isReady: Bool { shared.gates[side].isReady }

    func waitUntilReady() async throws(ATTError) {
        do { try await shared.gates[side].waitUntilReady() } catch { throw mapped(error) }
    }

    func receive() async -> ATTBearerEvent? {
        if shared.closed.withLock({ $0[side] }) { return nil }
        let event = await shared.inboxes[side].next()
        shared.gates[peer].signalReady()
        return event
    }

    func close() {
        let first = shared.closed.withLock { closed in
            defer { closed[side] = true }
            return !closed[side]
        }
        guard first else { return }
        shared.gates[side].fail(ATTError.closed)
        shared.gates[peer].fail(ATTError.disconnected(reason: "the peer closed the connection"))
        shared.inboxes[side].finish()
        try? shared.inboxes[peer].pushIgnoringCapacity(.disconnected(reason: "the peer closed the connection"))
        shared.inboxes[peer].finish()
    }

    /// Puts `pdu` in the peer's inbox if it has room.
    private func attempt(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool {
        do { return try shared.inboxes[peer].tryPush(.pdu(Array(pdu))) } catch { throw .disconnected(reason: "the peer closed the connection") }
    }

    /// The error a caller sees, as ``ATTBearer`` maps it: ``ATTError/closed`` once this end closed.
    private func mapped(_ error: any Error) -> ATTError {
        if shared.closed.withLock({ $0[side] }) { return .closed }
        if let error = error as? ATTError { return error }
        if error is CancellationError { return .cancelled }
        return .closed
    }
}
