import GATT
import GATTTestSupport
import Testing

typealias LinkPair = GATTLinkPair

extension GATTLinkPair {
    /// The links joined over a SEQPACKET socketpair, each end an ``ATTBearer``.
    convenience init(profile: GATTServiceProfile = .msgpipe, serverMTU: Int = 247, centralMTU: Int = 517) async throws {
        try await self.init(
            profile: profile, serverMTU: serverMTU, centralMTU: centralMTU, bearers: { try bearerPair() },
            reconnectFailed: { Issue.record("reconnecting over a new socketpair failed: \($0)") })
    }
}
