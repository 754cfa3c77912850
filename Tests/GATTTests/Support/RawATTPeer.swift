@testable import GATT
import Synchronization
import TestSupport

/// A hand-driven ATT client (raw PDU bytes) against a real ``GATTServerConnection`` on the other end of a
/// an in-memory ATT bearer pair. The server's application events are drained and counted.
struct RawATTPeer {
    let peer: MemoryATTConnection
    let server: GATTServerConnection
    let running: Task<Void, Never>
    let draining: Task<[GATTServerConnection.Event], Never>

    /// The read that proves the server is up: the battery level characteristic of ``TestDatabase``.
    static let probe = bytes("0a 03 00")
    static let probeAnswer = [ATTOpcode.readResponse] + Array("battery".utf8)

    init(server: GATTServer = TestDatabase.server(), clock: ATTClock = .continuous, receiveCapacity: Int = 16) throws {
        let (a, b) = bearerPair(receiveCapacity: receiveCapacity)
        peer = a
        let server = GATTServerConnection(bearer: b, server: server, clock: clock)
        self.server = server
        running = Task { await server.run() }
        draining = Task {
            var events: [GATTServerConnection.Event] = []
            for await event in server.events { events.append(event) }
            return events
        }
    }

    func send(_ pdu: [UInt8]) async throws { try await peer.send(pdu[...]) }

    /// Sends `pdu` and returns the next PDU from the server (nil when it disconnected instead).
    func exchange(_ pdu: [UInt8]) async throws -> [UInt8]? {
        try await send(pdu)
        return await next()
    }

    func exchange(_ hex: String) async throws -> [UInt8]? { try await exchange(bytes(hex)) }

    /// The next PDU from the server; nil on disconnect.
    func next() async -> [UInt8]? {
        guard case let .pdu(pdu)? = await peer.receive() else { return nil }
        return pdu
    }

    /// True if the server answers the probe read correctly as the very next PDU: it is up, and it sent
    /// nothing for whatever came before.
    func answersProbeNext() async throws -> Bool { try await exchange(Self.probe) == Self.probeAnswer }

    /// Disconnects and returns every event the server reported.
    func close() async -> [GATTServerConnection.Event] {
        peer.close()
        await running.value
        return await draining.value
    }
}
