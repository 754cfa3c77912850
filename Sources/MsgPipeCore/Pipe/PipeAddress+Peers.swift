extension PipeAddress {
    /// Why a central's set of peers cannot be used together.
    public enum PeersError: Error, Sendable, Equatable, CustomStringConvertible {
        /// More peers than one central holds at once.
        case tooMany(count: Int, limit: Int)
        /// Two entries name the same peer (as written by the caller).
        case duplicate(String, String)
        /// Socket paths and Bluetooth peers in one set.
        case mixed
        /// `unix:` without a path: neither a socket nor a peer's name.
        case emptySocketPath

        public var description: String {
            switch self {
            case let .tooMany(count, limit): "a central holds at most \(limit) peers at once, not \(count)"
            case let .duplicate(first, second): "the same peer is named twice: '\(first)' and '\(second)'"
            case .mixed: "socket paths and Bluetooth peers exclude each other"
            case .emptySocketPath: "unix: needs a socket path"
            }
        }
    }

    /// The most peers one central holds at once (its links over one adapter).
    public static let maximumPeers = 7

    /// True for a UNIX socket.
    public var isSocket: Bool {
        if case .unix = self { true } else { false }
    }

    /// What makes two addresses the same peer: a Bluetooth address without its case or `/random`; a name or a
    /// socket path as written.
    public var peerIdentity: String {
        guard case let .bluetooth(text) = self, case let .peer(device) = CentralTarget(text) else { return description }
        return device.address.description
    }

    /// Checks the peers of one central (`MessagePipe.connect(toEach:options:)`): at most ``maximumPeers``, no
    /// peer twice (by ``peerIdentity``), no `unix:` without a path, and sockets and Bluetooth peers not mixed;
    /// throws ``PeersError``: the count first, then the first peer in order that breaks a rule, the mix last.
    ///
    /// ```swift
    /// try PipeAddress.checkPeers(["door", "C0:11:22:33:44:55"].map(PipeAddress.init))
    /// ```
    public static func checkPeers(_ peers: [PipeAddress]) throws(PeersError) {
        guard peers.count <= maximumPeers else { throw .tooMany(count: peers.count, limit: maximumPeers) }
        var seen: [String: PipeAddress] = [:]
        for peer in peers {
            if peer == .bluetooth("unix:") { throw .emptySocketPath }
            if let earlier = seen[peer.peerIdentity] { throw .duplicate(earlier.description, peer.description) }
            seen[peer.peerIdentity] = peer
        }
        if peers.contains(where: \.isSocket), peers.contains(where: { !$0.isSocket }) { throw .mixed }
    }
}
