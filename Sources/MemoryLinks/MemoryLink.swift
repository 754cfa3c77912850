public import Transport
import Backpressure

/// One end of an in-memory packet link, for tests: backpressured (a full peer buffer suspends `send` until the
/// peer reads), with controls to drop and restore the connection and to change the packet size.
public struct MemoryLink: Link, LinkConnectionControl {
    private let connection: MemoryConnection
    private let side: Int

    /// Two connected ends. Each buffers up to `capacity` received packets before its peer's sends suspend.
    public static func pair(
        maximumPacketSize: Int = 244, capacity: Int = 32, connected: Bool = true
    ) -> (MemoryLink, MemoryLink) {
        let connection = MemoryConnection(
            maximumPacketSize: maximumPacketSize, capacity: capacity, connected: connected)
        return (MemoryLink(connection: connection, side: 0), MemoryLink(connection: connection, side: 1))
    }

    private init(connection: MemoryConnection, side: Int) {
        self.connection = connection
        self.side = side
    }

    /// Connection changes and packets from the peer; reading one lets a waiting peer send proceed.
    public var events: Events {
        Events(queue: connection.inbound[side], peerGate: connection.gates[1 - side])
    }

    public func send(_ packet: [UInt8]) async throws {
        try await connection.send(packet, from: side)
    }

    public func close() async { connection.close(side: side) }

    /// Drops the connection for both ends.
    public func disconnect(reason: String) async { connection.disconnect(reason: reason) }

    /// Restores a dropped connection for both ends (not after `close`).
    public func reconnect() async { connection.reconnect() }

    /// Events buffered for this end and not yet read (for tests).
    package var bufferedEvents: Int { connection.inbound[side].count }

    /// Changes the maximum packet size for both ends, as an ATT MTU exchange does.
    public func changeMaximumPacketSize(_ size: Int) async { connection.changeMaximumPacketSize(size) }

    /// The received events of one ``MemoryLink`` end.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = LinkEvent
        public typealias Failure = Never

        let queue: BoundedAsyncQueue<LinkEvent, Never>
        let peerGate: ReadinessGate

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: queue.makeAsyncIterator(), peerGate: peerGate)
        }

        /// Takes events in order; each one taken frees room for the peer's sends.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: BoundedAsyncQueue<LinkEvent, Never>.AsyncIterator
            let peerGate: ReadinessGate

            public mutating func next() async -> LinkEvent? {
                let event = await base.next()
                peerGate.signalReady()
                return event
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async -> LinkEvent? {
                let event = await base.next(isolation: actor)
                peerGate.signalReady()
                return event
            }
        }
    }
}
