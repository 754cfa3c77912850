import Transport
import Backpressure
import Synchronization

/// The shared state of a ``MemoryLink`` pair: the connection, and for each side its bounded inbound event
/// queue and the readiness gate its sends wait on (signalled when the peer consumes an event).
final class MemoryConnection: Sendable {
    private struct State {
        var isConnected: Bool
        /// Counts connection changes, so a send knows whether the connection it started on is still up.
        var epoch: UInt64 = 0
        var maximumPacketSize: Int
        var closed = [false, false]
        var lastDisconnectReason = "not connected yet"
    }

    private let state: Mutex<State>
    let inbound: [BoundedAsyncQueue<LinkEvent, Never>]
    let gates: [ReadinessGate]

    init(maximumPacketSize: Int, capacity: Int, connected: Bool) {
        state = Mutex(State(isConnected: connected, maximumPacketSize: maximumPacketSize))
        inbound = [BoundedAsyncQueue(capacity: capacity), BoundedAsyncQueue(capacity: capacity)]
        gates = [ReadinessGate(), ReadinessGate()]
        if connected { broadcast(.connected(maximumPacketSize: maximumPacketSize)) }
    }

    /// Sends `packet` from `side` to the other side's inbound queue, waiting while it is full.
    func send(_ packet: [UInt8], from side: Int) async throws {
        let (startEpoch, startConnected) = state.withLock { ($0.epoch, $0.isConnected) }
        try await gates[side].send {
            try state.withLock { state throws(LinkError) -> Bool in
                if state.closed[side] { throw .closed }
                guard state.isConnected, state.epoch == startEpoch else {
                    throw startConnected ? .disconnected(reason: state.lastDisconnectReason) : .notConnected
                }
                guard packet.count <= state.maximumPacketSize else {
                    throw .packetTooLarge(size: packet.count, limit: state.maximumPacketSize)
                }
                do {
                    return try inbound[1 - side].tryPush(.packet(packet))
                } catch {
                    throw .closed
                }
            }
        }
    }

    func disconnect(reason: String) {
        let changed = state.withLock { state in
            guard state.isConnected else { return false }
            state.isConnected = false
            state.epoch &+= 1
            state.lastDisconnectReason = reason
            broadcast(.disconnected(reason: reason))
            return true
        }
        if changed { wakeSenders() }
    }

    func reconnect() {
        state.withLock { state in
            guard !state.isConnected, !state.closed.contains(true) else { return }
            state.isConnected = true
            state.epoch &+= 1
            broadcast(.connected(maximumPacketSize: state.maximumPacketSize))
        }
    }

    func changeMaximumPacketSize(_ size: Int) {
        state.withLock { state in
            state.maximumPacketSize = size
            if state.isConnected { broadcast(.maximumPacketSizeChanged(size)) }
        }
        wakeSenders()
    }

    func close(side: Int) {
        state.withLock { state in
            guard !state.closed[side] else { return }
            state.closed[side] = true
            if state.isConnected {
                state.isConnected = false
                state.epoch &+= 1
                state.lastDisconnectReason = "the peer closed the link"
                try? inbound[1 - side].pushIgnoringCapacity(.disconnected(reason: state.lastDisconnectReason))
            }
            inbound[side].finish()
        }
        wakeSenders()
    }

    /// Control events bypass the capacity: there is at most one per connection change, which only the test
    /// or the fault injector makes, so they stay bounded; data never does.
    private func broadcast(_ event: LinkEvent) {
        for queue in inbound { try? queue.pushIgnoringCapacity(event) }
    }

    private func wakeSenders() {
        for gate in gates { gate.signalReady() }
    }
}
