import Synchronization

/// One peer's session at a ``TransportListener``: the peer's session id (from its `hello`, PROTOCOL.md 3.9)
/// and the ``Transport`` that serves it across the peer's connections, so a peer that reconnects resumes
/// where it stopped.
public final class TransportSession: Sendable {
    /// The session the peer named in its `hello`: random per peer process.
    public let id: UInt64
    /// Sends to and receives from this peer. It closes when the listener drops the session (the peer stayed
    /// away longer than ``TransportListener/Limits/resumeWindow``, room was needed, or the listener closed).
    public let transport: Transport
    let link: RelayLink

    private struct Details {
        var peer: String
        var connections = 0
        var latestConnection = 0
        var disconnectedAt: ContinuousClock.Instant?
        var expiry: Task<Void, Never>?
    }

    private let details: Mutex<Details>

    init(id: UInt64, peer: String, link: RelayLink, transport: Transport) {
        self.id = id
        self.link = link
        self.transport = transport
        details = Mutex(Details(peer: peer))
    }

    /// The description of the peer's latest connection (an address, or the socket path).
    public var peer: String { details.withLock { $0.peer } }

    /// How many connections of this peer the session has had.
    public var connections: Int { details.withLock { $0.connections } }

    /// The listener's 1-based number of the peer's latest connection (it counts the connections that said
    /// hello, in the order they did).
    public var latestConnection: Int { details.withLock { $0.latestConnection } }

    /// True while one of the peer's connections is attached.
    public var isConnected: Bool { link.isConnected }

    /// When the peer's last connection ended; nil while connected.
    var disconnectedAt: ContinuousClock.Instant? { details.withLock { $0.disconnectedAt } }

    func connected(peer: String, number: Int) {
        details.withLock { details in
            details.peer = peer
            details.latestConnection = number
            details.connections += 1
            details.disconnectedAt = nil
            details.expiry.take()?.cancel()
        }
    }

    func disconnected(expiry: Task<Void, Never>) {
        details.withLock { details in
            details.disconnectedAt = .now
            details.expiry.take()?.cancel()
            details.expiry = expiry
        }
    }

    func cancelExpiry() {
        details.withLock { $0.expiry.take()?.cancel() }
    }
}
