public import BLELink
public import GATT
import Synchronization

/// What a pipe's link runs on, as far as this side can learn it. Linux tells a process the PHY of a
/// connection (`BT_PHY`, Linux 5.10 and later) and the MTU it carries, but not the connection interval,
/// latency or supervision timeout in force: those are given as requested (what this side asked the kernel
/// for), never guessed, and ``unknown`` says what is missing and why.
///
/// ```swift
/// let link = pipe.linkParameters
/// print(link.requested?.description ?? "system defaults", link.phy?.description ?? "phy unknown", link.mtu ?? 0)
/// ```
public struct LinkParameters: Sendable, Equatable, CustomStringConvertible {
    /// The interval range, latency and timeout this side asked for (the request over the adapter's
    /// defaults); nil when it asked for none. The controller and the peer choose the values in force
    /// within what was asked, and the peer may change them later.
    public var requested: ConnectionParameters?
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
        requested: ConnectionParameters? = nil, preferredPHY: LEPHY? = nil, phy: LinkPHY? = nil, mtu: Int? = nil,
        unknown: [String] = []
    ) {
        self.requested = requested
        self.preferredPHY = preferredPHY
        self.phy = phy
        self.mtu = mtu
        self.unknown = unknown
    }

    /// Why a process on Linux cannot give the interval, latency and timeout in force.
    public static let liveParametersUnknown =
        "the interval, latency and supervision timeout in force (Linux tells no process; btmon shows them)"

    /// "requested interval 7.5-15 ms, latency 0, supervision timeout 420 ms; phy 2m; mtu 247; unknown: ...".
    public var description: String {
        var parts: [String] = []
        if let requested { parts.append("requested \(requested)") }
        if let preferredPHY { parts.append("preferred phy \(preferredPHY)") }
        if let phy { parts.append("phy \(phy)") }
        if let mtu { parts.append("mtu \(mtu)") }
        if !unknown.isEmpty { parts.append("unknown: " + unknown.joined(separator: "; ")) }
        return parts.joined(separator: "; ")
    }
}

/// What a central's connector learns of each connection as it makes it (the ATT bearer, for the PHY, and the
/// parameters loaded for the peer) and the pipe of its link events (the packet size).
final class LinkObservation: Sendable {
    private struct State {
        var bearer: ATTBearer?
        var packetSize: Int?
        var requested: ConnectionParameters?
    }

    private let state = Mutex(State())

    func connected(_ bearer: ATTBearer) { state.withLock { $0.bearer = bearer } }
    func requested(_ parameters: ConnectionParameters?) { state.withLock { $0.requested = parameters } }
    func packetSize(_ size: Int) { state.withLock { $0.packetSize = size } }

    /// The parameters as known now. `usesChannel`: the data goes over an L2CAP channel (whose unit is the
    /// packet size) rather than GATT (MTU - 3).
    func parameters(preferredPHY: LEPHY?, usesChannel: Bool) -> LinkParameters {
        let (bearer, size, requested) = state.withLock { ($0.bearer, $0.packetSize, $0.requested) }
        var parameters = LinkParameters(
            requested: requested, preferredPHY: preferredPHY, phy: bearer?.phy,
            mtu: size.map { usesChannel ? $0 : $0 + 3 })
        if parameters.phy == nil {
            parameters.unknown.append(bearer == nil
                ? "the PHY (only the kernel backend reads it)" : "the PHY (the kernel did not say: before Linux 5.10, or the link is down)")
        }
        parameters.unknown.append(LinkParameters.liveParametersUnknown)
        return parameters
    }
}
