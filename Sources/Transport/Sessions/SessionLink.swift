import Backpressure
import Synchronization

/// The ``Link`` under one peer session's ``Transport``: it outlives the peer's connections. The
/// ``TransportListener`` attaches each connection of the session in turn; the link reports it as
/// `.connected`, its packets, `.disconnected`, and sends go to whichever connection is attached.
final class SessionLink: Link, Sendable {
    let events: BoundedAsyncQueue<LinkEvent, Never>
    /// One connection attached at a time: a forwarder holds it from `.connected` to `.disconnected`.
    let attachment = CreditPool(capacity: 1)

    /// The attached connection's operations.
    struct Connection: Sendable {
        let number: UInt64
        let send: @Sendable ([UInt8]) async throws -> Void
        let close: @Sendable () async -> Void
    }

    private struct State {
        var connection: Connection?
        var closed = false
    }

    private let state = Mutex(State())

    init(eventCapacity: Int) {
        events = BoundedAsyncQueue(capacity: eventCapacity)
    }

    var isClosed: Bool { state.withLock { $0.closed } }
    var isConnected: Bool { state.withLock { $0.connection != nil } }

    /// Makes `connection` the one sends go to; false once the link is closed.
    func attach(_ connection: Connection) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.connection = connection
            return true
        }
    }

    /// Forgets `number` if it is still the attached connection.
    func detach(_ number: UInt64) {
        state.withLock { state in
            if state.connection?.number == number { state.connection = nil }
        }
    }

    /// Closes the attached connection (its forwarder then reports `.disconnected`), if any.
    func dropConnection() async {
        await state.withLock { $0.connection }?.close()
    }

    func send(_ packet: [UInt8]) async throws {
        let connection = try state.withLock { state throws(LinkError) -> Connection in
            if state.closed { throw .closed }
            guard let connection = state.connection else { throw .notConnected }
            return connection
        }
        try await connection.send(packet)
    }

    func close() async {
        let connection = state.withLock { state in
            state.closed = true
            return state.connection.take()
        }
        await connection?.close()
        events.finish()
    }
}
