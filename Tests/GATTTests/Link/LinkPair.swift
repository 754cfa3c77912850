import GATT
import GATTTestSupport
import Testing

typealias LinkPair = GATTLinkPair

extension GATTLinkPair {
    /// The links joined over an in-memory ATT bearer pair.
    convenience init(profile: GATTServiceProfile = .msgpipe, serverMTU: Int = 247, centralMTU: Int = 517) async throws {
        try await self.init(
            profile: profile, serverMTU: serverMTU, centralMTU: centralMTU, bearers: { bearerPair() },
            reconnectFailed: { Issue.record("reconnecting over a new bearer pair failed: \($0)") })
    }
}
