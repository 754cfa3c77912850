import MsgPipe

/// The `--json` fields that say what a link runs on (`send` results, `listen` lines), each present only where
/// known: `interval_ms` ([minimum, maximum]), `latency` and `supervision_timeout_ms` are what this side
/// requested or, after the peer's accepted update, what the peer asked for (`changed_by_peer` true; false when
/// this side would have seen one; absent when it cannot see them), `phy` what the kernel reports now, `mtu` the
/// ATT MTU (GATT) or the channel's send unit (L2CAP). `send` and `listen` print them in their lines with
/// ``JSONLine/text(_:adding:)``.
struct LinkParameterFields: Equatable, Encodable {
    var intervalMilliseconds: [Double]?
    var latency: Int?
    var supervisionTimeoutMilliseconds: Int?
    var changedByPeer: Bool?
    var phy: String?
    var mtu: Int?

    enum CodingKeys: String, CodingKey {
        case latency, phy, mtu
        case intervalMilliseconds = "interval_ms"
        case supervisionTimeoutMilliseconds = "supervision_timeout_ms"
        case changedByPeer = "changed_by_peer"
    }

    init(_ parameters: LinkParameters?) {
        if let parameters, let inForce = parameters.inForce {
            intervalMilliseconds = [inForce.minimumInterval, inForce.maximumInterval].map { Double($0) * 1.25 }
            latency = Int(inForce.latency)
            supervisionTimeoutMilliseconds = Int(inForce.supervisionTimeout) * 10
            if parameters.seesPeerUpdates || parameters.changedByPeer { changedByPeer = parameters.changedByPeer }
        }
        phy = parameters?.phy?.description
        mtu = parameters?.mtu
    }
}
