public import GATT
import Synchronization

/// What a pipe's link runs on, as far as this side can learn it. Linux tells a process the PHY of a
/// connection (`BT_PHY`, Linux 5.10 and later) and the MTU it carries, and (with CAP_NET_ADMIN) a peer's
/// parameter update that the kernel accepted, but not the interval in force: values are given as requested,
/// never guessed, and ``unknown`` says what is missing and why.
///
/// ```swift
/// let link = pipe.linkParameters
/// print(link.inForce?.description ?? "system defaults", link.changedByPeer, link.phy?.description ?? "phy unknown")
/// ```
public struct LinkParameters: Sendable, Equatable, CustomStringConvertible {
    /// The interval range, latency and timeout this side asked for (the request over the adapter's
    /// defaults); nil when it asked for none. The controller and the peer choose the values in force
    /// within what was asked, and the peer may change them later.
    public var requested: ConnectionParameters?
    /// The interval range, latency and timeout the peer asked for mid-connection (an L2CAP Connection
    /// Parameter Update Request) and this side's kernel accepted, the latest on this connection; the
    /// controller picks the interval within the range. nil when none came or this side cannot see them.
    public var acceptedPeerRequest: ConnectionParameters?
    /// True when this side would learn of a peer's accepted update (a kernel-backend central with CAP_NET_ADMIN
    /// whose watch of the kernel's events has not failed).
    public var seesPeerUpdates: Bool
    /// The PHY this side asked to prefer; nil when none.
    public var preferredPHY: LEPHY?
    /// The PHYs the connection transmits and receives on, read from the kernel now; nil where it does not say.
    public var phy: LinkPHY?
    /// The ATT MTU in use over GATT (the largest write plus 3), or the channel's send unit over L2CAP; nil
    /// before the first connection.
    public var mtu: Int?
    /// What is not known and why, one phrase each.
    public var unknown: [String]

    public init(
        requested: ConnectionParameters? = nil, acceptedPeerRequest: ConnectionParameters? = nil,
        seesPeerUpdates: Bool = false, preferredPHY: LEPHY? = nil, phy: LinkPHY? = nil, mtu: Int? = nil,
        unknown: [String] = []
    ) {
        self.seesPeerUpdates = seesPeerUpdates
        self.requested = requested
        self.acceptedPeerRequest = acceptedPeerRequest
        self.preferredPHY = preferredPHY
        self.phy = phy
        self.mtu = mtu
        self.unknown = unknown
    }

    /// The range, latency and timeout the connection runs within: the peer's accepted request, else this side's.
    public var inForce: ConnectionParameters? { acceptedPeerRequest ?? requested }

    /// True when the peer changed the parameters on this connection (``acceptedPeerRequest`` is set).
    public var changedByPeer: Bool { acceptedPeerRequest != nil }

    /// Why a process on Linux cannot give the interval, latency and timeout in force.
    public static let liveParametersUnknown =
        "the interval, latency and supervision timeout in force (Linux tells no process; btmon shows them)"

    /// Why a central does not see a peer's parameter update (it has no trusted mgmt socket).
    public static let peerUpdatesUnseen =
        "whether the peer changed them (the kernel tells only a process with CAP_NET_ADMIN, on the kernel backend)"

    /// Why a central no longer sees a peer's parameter update: the watch of the kernel's events ended on `reason`.
    public static func peerUpdatesLost(_ reason: String) -> String {
        "whether the peer changed them (the watch of the kernel's parameter events stopped: \(reason))"
    }

    /// "requested interval 7.5-15 ms, latency 0, supervision timeout 420 ms; phy 2m; mtu 247; unknown: ...".
    public var description: String {
        var parts: [String] = []
        if let requested { parts.append("requested \(requested)") }
        if let acceptedPeerRequest { parts.append("peer's accepted request \(acceptedPeerRequest)") }
        if let preferredPHY { parts.append("preferred phy \(preferredPHY)") }
        if let phy { parts.append("phy \(phy)") }
        if let mtu { parts.append("mtu \(mtu)") }
        if !unknown.isEmpty { parts.append("unknown: " + unknown.joined(separator: "; ")) }
        return parts.joined(separator: "; ")
    }
}

/// What a central's connector learns of each connection as it makes it (how to read the link's PHY, the
/// parameters loaded for the peer, the peer's accepted parameter updates) and the pipe of its link events
/// (the packet size). A connection attempt starts with ``connecting(controller:makeWatch:)`` and its peer is
/// named by ``connected(to:)``; updates that come before it are kept by address (16 peers at most). A backend
/// that learns nothing of this leaves it untouched.
package final class LinkObservation: Sendable {
    private struct State {
        var phy: (@Sendable () -> LinkPHY?)?
        var packetSize: Int?
        var requested: ConnectionParameters?
        var watch: (any PeerUpdateSource)?
        /// The controller whose watch was tried (one per pipe), and whether its events can arrive.
        var watchedController: UInt16?
        var watching = false
        var peer: BluetoothAddress?
        var accepted: ConnectionParameters?
        var pending: [BluetoothAddress: ConnectionParameters] = [:]
    }

    package static let pendingLimit = 16
    private let state = Mutex(State())
    private let onPeerUpdate: @Sendable (BluetoothPeer, ConnectionParameters) -> Void

    package init(onPeerUpdate: @escaping @Sendable (BluetoothPeer, ConnectionParameters) -> Void = { _, _ in }) {
        self.onPeerUpdate = onPeerUpdate
    }

    deinit { state.withLock { $0.watch }?.stop() }

    /// The connection is made; `phy` reads its PHYs now (nil where the backend does not say).
    package func connected(phy: @escaping @Sendable () -> LinkPHY?) { state.withLock { $0.phy = phy } }
    package func requested(_ parameters: ConnectionParameters?) { state.withLock { $0.requested = parameters } }
    package func packetSize(_ size: Int) { state.withLock { $0.packetSize = size } }

    /// A new connection to be made on `controller`: forgets the last one's peer updates and, the first time,
    /// watches the controller's updates (`makeWatch` starts a watch that reports each peer's accepted
    /// parameters: nil when it cannot; a watch that is not trusted is stopped).
    package func connecting(
        controller: UInt16,
        makeWatch: (UInt16, @escaping @Sendable (BluetoothPeer, ConnectionParameters) -> Void) -> (any PeerUpdateSource)?
    ) {
        let tryWatch = state.withLock { state -> Bool in
            state.peer = nil
            state.accepted = nil
            state.pending = [:]
            defer { state.watchedController = controller }
            return state.watchedController == nil
        }
        guard tryWatch else { return }
        let watch = makeWatch(controller) { [weak self] peer, parameters in self?.peerAccepted(peer, parameters) }
        guard let watch, watch.isTrusted else {
            watch?.stop()
            return
        }
        state.withLock {
            $0.watch = watch
            $0.watching = true
        }
    }

    /// The connection is up to `peer`: an update it already sent counts from here.
    package func connected(to peer: BluetoothPeer) {
        let accepted = state.withLock { state -> ConnectionParameters? in
            state.peer = peer.address
            state.accepted = state.pending[peer.address]
            state.pending = [:]
            return state.accepted
        }
        if let accepted { onPeerUpdate(peer, accepted) }
    }

    /// The watched controller accepted `parameters` from `peer`: kept when it is the connection's peer (or the
    /// peer is not known yet).
    package func peerAccepted(_ peer: BluetoothPeer, _ parameters: ConnectionParameters) {
        let told = state.withLock { state -> Bool in
            guard let connected = state.peer else {
                if state.pending.count < Self.pendingLimit || state.pending[peer.address] != nil {
                    state.pending[peer.address] = parameters
                }
                return false
            }
            guard connected == peer.address else { return false }
            state.accepted = parameters
            return true
        }
        if told { onPeerUpdate(peer, parameters) }
    }

    /// Stops watching (the pipe closed); a reason the watch ended with stays. Idempotent.
    package func stop() { state.withLock { $0.watch }?.stop() }

    /// The parameters as known now. `carrier`: on an L2CAP channel the MTU is the packet size, on GATT the
    /// packet size + 3.
    package func parameters(preferredPHY: LEPHY?, carrier: Carrier) -> LinkParameters {
        let (readPHY, size, requested, accepted, watching, watch) = state.withLock {
            ($0.phy, $0.packetSize, $0.requested, $0.accepted, $0.watching, $0.watch)
        }
        let watchEnded = watch?.stopReason
        let sees = watching && watchEnded == nil
        var parameters = LinkParameters(
            requested: requested, acceptedPeerRequest: accepted, seesPeerUpdates: sees, preferredPHY: preferredPHY, phy: readPHY?(),
            mtu: size.map { carrier == .l2cap ? $0 : $0 + 3 })
        if parameters.phy == nil {
            parameters.unknown.append(readPHY == nil
                ? "the PHY (only the kernel backend reads it)" : "the PHY (the kernel did not say: before Linux 5.10, or the link is down)")
        }
        parameters.unknown.append(LinkParameters.liveParametersUnknown)
        if !sees { parameters.unknown.append(watchEnded.map(LinkParameters.peerUpdatesLost) ?? LinkParameters.peerUpdatesUnseen) }
        return parameters
    }
}

/// Where a ``LinkObservation`` hears of a peer's accepted parameter updates (the kernel's mgmt socket, or a
/// test's fake).
package protocol PeerUpdateSource: Sendable {
    /// The updates can arrive (the kernel sends them only to a socket bound with CAP_NET_ADMIN).
    var isTrusted: Bool { get }
    /// Why it ended on its own (its socket failed); once set it stays. nil while it runs or when ``stop()`` ended it.
    var stopReason: String? { get }
    func stop()
}
