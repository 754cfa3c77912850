import BLELink
import Glibc

extension LinkOptions {
    /// The peripheral role with a fresh ``GATTLink`` per connection (so each central gets a fresh Transport
    /// and secure session): for each central, `session` runs with the link while the link serves it; when
    /// the central disconnects the link is closed, and the next central is accepted only after `session`
    /// returned (one connection at a time). Returns after `connections` centrals (nil: until cancelled).
    func serveSessions(
        info: MsgPipeServiceInfo, connections: Int? = nil, onReady: (String) -> Void = { _ in },
        session: @escaping @Sendable (GATTLink, String) async -> Void
    ) async throws {
        let profile = try gattProfile()
        switch try endpoint() {
        case let .unix(path):
            let listener = try SeqPacketSocket.listen(path: path)
            defer { _ = Glibc.close(listener) }
            onReady("listening on unix:\(path)")
            var served = 0
            while connections.map({ served < $0 }) ?? true {
                let descriptor = try await SeqPacketSocket.accept(listener)
                served += 1
                await Self.run(
                    session, bearer: try ATTBearer(adopting: descriptor), profile: profile, info: info,
                    peer: "unix:\(path)")
            }
        case .bluetooth:
            try await bluetooth.acceptConnections(
                service: AdvertisedServiceUUID(profile.service.description), connections: connections,
                onAdvertising: { onReady("advertising '\($0.advertisement.localName)' on \($0.adapter)") }
            ) { socket in
                await Self.run(
                    session, bearer: try ATTBearer(adopting: socket.fileDescriptor), profile: profile, info: info,
                    peer: "\(socket.peer)")
            }
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
