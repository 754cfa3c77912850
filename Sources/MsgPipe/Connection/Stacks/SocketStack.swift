import BLELink
import GATT

/// The UNIX-socket backend: msgpipe's own GATT over a SOCK_SEQPACKET socket, the same bytes as over the
/// radio without one. A central's link connects to the socket again after a drop.
///
/// ```swift
/// let pipe = try await MessagePipe.connect(to: "unix:/tmp/kiosk.sock", over: SocketStack())
/// ```
public struct SocketStack: PipeStack {
    public init() {}

    /// A GATT client for the socket at `address` (`unix:PATH`, or a bare path).
    public func centralLink(to address: PipeAddress, options: MessagePipe.Options) async throws -> any CentralLink {
        let (gatt, path) = (GATTLink(profile: options.profile), Self.path(address))
        return ConnectingLink(base: gatt) { _ in
            let bearer = try ATTBearer(adopting: try SeqPacketSocket.connect(path: path))
            try await gatt.connect(bearer)
            return "unix:\(path)"
        }
    }

    /// A ``SocketAcceptor`` listening on the socket at `address` (`unix:PATH`, or a bare path).
    public func acceptor(at address: PipeAddress, options: MessagePipe.Options) -> any LinkAcceptor {
        SocketAcceptor(path: Self.path(address), options: options)
    }

    private static func path(_ address: PipeAddress) -> String {
        switch address {
        case let .unix(path): path
        case let .bluetooth(text): text
        }
    }
}
