import GATT
import BLELink
import Glibc

extension LinkOptions {
    /// The peripheral role with a fresh ``GATTLink`` per connection (so each central gets a fresh Transport
    /// and secure session): for each central, `session` runs with the link while the link serves it; when
    /// the central disconnects the link is closed. Up to `maximumConcurrent` centrals are served at once; a
    /// further one is accepted when one of them has left and its `session` returned. Returns after
    /// `connections` centrals (nil: until cancelled). With `shutdown`, a signal removes the socket file or
    /// stops advertising.
    func serveSessions(
        info: MsgPipeServiceInfo, connections: Int? = nil, maximumConcurrent: Int = 1, shutdown: ShutdownSignal? = nil,
        onReady: (String) -> Void = { _ in },
        session: @escaping @Sendable (GATTLink, String) async -> Void
    ) async throws {
        let profile = try gattProfile()
        try await acceptBearers(
            profile: profile, connections: connections, maximumConcurrent: maximumConcurrent, shutdown: shutdown,
            onReady: onReady
        ) {
            bearer, peer in
            await Self.run(session, bearer: bearer, profile: profile, info: info, peer: peer)
        }
    }

    private static func run(
        _ session: @escaping @Sendable (GATTLink, String) async -> Void, bearer: ATTBearer,
        profile: GATTServiceProfile, info: MsgPipeServiceInfo, peer: String
    ) async {
        let link = GATTLink(profile: profile)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await session(link, peer) }
            await link.serve(bearer, info: info)
            await link.close()
            await group.waitForAll()
        }
    }
}
