public import Backpressure
import Synchronization

/// A ``Link`` that outlives its connections. Each connection is a one-connection link (a socket, the
/// descriptors bluetoothd hands out, one connection at a ``TransportListener``) given to ``carry(_:)`` in
/// turn: the relay reports it as `.connected`, its packets, then `.disconnected`, and sends go to the
/// connection carried now. A ``Transport`` over a relay resumes across connections as it does over a link
/// that reconnects by itself.
public final class RelayLink: Link, Sendable {
    public let events: BoundedAsyncQueue<LinkEvent, Never>
    /// One connection carried at a time.
    private let attachment = CreditPool(capacity: 1)

    private struct Carried: Sendable {
        let number: UInt64
        let send: @Sendable ([UInt8]) async throws -> Void
        let close: @Sendable () async -> Void
        let renewIncoming: @Sendable () async -> Void
    }

    private struct State {
        var carried: Carried?
        var connections: UInt64 = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// A relay whose events queue holds at most `eventCapacity` events (the carried connection waits).
    public init(eventCapacity: Int = 64) {
        events = BoundedAsyncQueue(capacity: max(2, eventCapacity))
    }

    /// True once ``close()`` was called.
    public var isClosed: Bool { state.withLock { $0.closed } }
    /// True while a connection is carried.
    public var isConnected: Bool { state.withLock { $0.carried != nil } }

    /// Carries `connection` until it ends, then closes it and returns true; a connection carried before is
    /// dropped first (its peer came back on a new one). Returns false at once, closing `connection`, when
    /// the relay is closed.
    @discardableResult
    public func carry<Connection: Link>(_ connection: Connection) async -> Bool {
        var events = connection.events.makeAsyncIterator()
        return await carry(connection, events: &events, replaying: [])
    }

    /// ``carry(_:)`` for a connection whose first events were already read from `events`: `replaying` them
    /// first. `onCarried` runs once the connection is the one sends go to.
    func carry<Connection: Link, Events: AsyncIteratorProtocol<LinkEvent, Never>>(
        _ connection: Connection, events: inout Events, replaying: [LinkEvent], onCarried: () -> Void = {}
    ) async -> Bool {
        await dropConnection()
        do {
            try await attachment.acquire()
        } catch {
            await connection.close()
            return false
        }
        defer { attachment.release() }
        let number = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.connections += 1
            state.carried = Carried(
                number: state.connections, send: { try await connection.send($0) }, close: { await connection.close() },
                renewIncoming: { await connection.renewIncoming() })
            return state.connections
        }
        guard let number else {
            await connection.close()
            return false
        }
        onCarried()
        await forward(&events, replaying: replaying)
        state.withLock { state in
            if state.carried?.number == number { state.carried = nil }
        }
        await connection.close()
        return true
    }

    /// Reports the carried connection: `replaying`, then what follows until it ends (always ending with one
    /// `.disconnected`; only its first `.connected` is passed on).
    private func forward<Events: AsyncIteratorProtocol<LinkEvent, Never>>(
        _ source: inout Events, replaying: [LinkEvent]
    ) async {
        var connected = replaying.contains { if case .connected = $0 { true } else { false } }
        do {
            for event in replaying { try await events.push(event) }
            while let event = await source.next(isolation: nil) {
                switch event {
                case .connected:
                    if connected { continue }
                    connected = true
                    try await events.push(event)
                case .packet, .maximumPacketSizeChanged:
                    try await events.push(event)
                case .disconnected:
                    try await events.push(event)
                    return
                }
            }
            try await events.push(.disconnected(reason: "the connection closed"))
        } catch {
            return  // the relay closed: nobody reads its events any more
        }
    }

    /// Closes the carried connection, if any (``carry(_:)`` then reports `.disconnected` and returns).
    public func dropConnection() async {
        await state.withLock { $0.carried }?.close()
    }

    /// Asks the carried connection, if any, to renew its incoming path.
    public func renewIncoming() async {
        await state.withLock { $0.carried }?.renewIncoming()
    }

    public func send(_ packet: [UInt8]) async throws {
        let carried = try state.withLock { state throws(LinkError) -> Carried in
            if state.closed { throw .closed }
            guard let carried = state.carried else { throw .notConnected }
            return carried
        }
        do {
            try await carried.send(packet)
        } catch LinkError.closed {
            // That connection was closed (dropped, or its peer left); the relay itself is not.
            throw isClosed ? LinkError.closed : LinkError.disconnected(reason: "the connection closed")
        }
    }

    public func close() async {
        let carried = state.withLock { state in
            state.closed = true
            return state.carried.take()
        }
        await carried?.close()
        events.finish()
    }
}
