import GATT
import MsgPipe

/// The `--json` fields that say what a link runs on (`send` results, `listen` lines), each present only where
/// known: `interval_ms` ([minimum, maximum]), `latency` and `supervision_timeout_ms` are what this side
/// requested (Linux tells no process the values in force), `phy` what the kernel reports now, `mtu` the ATT
/// MTU (GATT) or the channel's send unit (L2CAP).
struct LinkParameterFields: Equatable {
    var intervalMilliseconds: [Double]?
    var latency: Int?
    var supervisionTimeoutMilliseconds: Int?
    var phy: String?
    var mtu: Int?

    init(_ parameters: LinkParameters?) {
        if let requested = parameters?.requested {
            intervalMilliseconds = [requested.minimumInterval, requested.maximumInterval].map { Double($0) * 1.25 }
            latency = Int(requested.latency)
            supervisionTimeoutMilliseconds = Int(requested.supervisionTimeout) * 10
        }
        phy = parameters?.phy?.description
        mtu = parameters?.mtu
    }
}
