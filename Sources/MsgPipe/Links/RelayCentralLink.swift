public import Backpressure
import Synchronization
public import Transport

/// A central's link that carries one connection after another on a Transport `RelayLink`
/// (``BlueZCentralLink``, ``ChannelCentralLink``): its events, sends, incoming renewals and disconnects go to the
/// relay, so Transport over it resumes across connections. A conformer chains its connections through a
/// `RelayCarriage`.
public protocol RelayCentralLink: PipeLink {
    /// The relay the connections are carried on, one at a time.
    var relay: RelayLink { get }
}

extension RelayCentralLink {
    public var events: BoundedAsyncQueue<LinkEvent, Never> { relay.events }

    /// Sends on the connection carried now (`RelayLink.send(_:)`).
    public func send(_ packet: [UInt8]) async throws {
        try await relay.send(packet)
    }

    public func renewIncoming() async {
        await relay.renewIncoming()
    }

    /// Drops the connection carried now; `PipeConnector` may connect the link again.
    public func disconnect() async {
        await relay.dropConnection()
    }
}

/// A relay and the chain of connections it carries: each connection is carried once the one before it ended,
/// so a reconnect never overlaps the connection it replaces.
final class RelayCarriage: Sendable {
    let relay = RelayLink()
    /// The task carrying the newest connection (ends once that connection ended and `ended` ran).
    private let carrying = Mutex<Task<Void, Never>?>(nil)

    /// Carries `connection` on the relay once the connection carried before ended, then runs `ended` (the
    /// relay has closed `connection` by then).
    func carry(_ connection: any Link, then ended: @escaping @Sendable () async -> Void) {
        let relay = relay
        carrying.withLock { task in
            let previous = task
            task = Task {
                await previous?.value
                await relay.carry(connection)
                await ended()
            }
        }
    }

    /// Closes the relay and waits until the connection carried now ended and its `ended` ran.
    func close() async {
        await relay.close()
        await carrying.withLock { $0 }?.value
    }
}
