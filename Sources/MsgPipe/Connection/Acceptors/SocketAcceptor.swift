import BLELink
public import GATT
import Transport

/// The UNIX-socket backend's peripheral (``SocketStack``'s acceptor): listens on a SOCK_SEQPACKET socket and
/// serves each central with msgpipe's own GATT server, the same bytes as over the radio without one.
///
/// ```swift
/// let acceptor = SocketAcceptor(path: "/tmp/kiosk.sock", options: options)
/// try await acceptor.acceptLinks(
///     info: options.serviceInfo(), connections: 1, maximumConcurrent: 1, centralsAtOnce: 1, unnumbered: false,
///     onReady: { print($0) }) { link, peer in await TransportListener().accept(link, peer: peer) }
/// ```
public final class SocketAcceptor: LinkAcceptor {
    private let loop: AcceptLoop
    /// The socket's path.
    public let path: String

    /// Listens at `path` (created by ``acceptLinks(info:connections:maximumConcurrent:centralsAtOnce:unnumbered:onReady:handle:)``,
    /// removed by ``stop()`` and when the loop ends).
    public init(path: String, options: MessagePipe.Options) {
        self.path = path
        self.loop = AcceptLoop(address: .unix(path: path), options: options)
    }

    /// `LinkAcceptor/acceptLinks(info:connections:maximumConcurrent:centralsAtOnce:unnumbered:onReady:handle:)` on
    /// the socket; with several at once each central's peer is `unix:PATH#N`. Throws `BluetoothError` when the
    /// socket cannot be made.
    public func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        let (loop, path) = (loop, path)
        let listener = try SeqPacketListener(path: path)
        defer { listener.close() }
        loop.onStop { listener.close() }
        onReady("listening on unix:\(path)")
        try await AcceptLoop.acceptEach(connections: connections, maximumConcurrent: maximumConcurrent) {
            try await listener.accept()
        } handle: { bearer, number in
            let peer = maximumConcurrent > 1 ? "unix:\(path)#\(number)" : "unix:\(path)"
            await loop.serveGATT(bearer, peer: peer, info: info, configuration: GATTServer.Configuration(), handle: handle)
        }
    }

    public var options: MessagePipe.Options { loop.options }
    /// True: the socket's accept ends on cancellation.
    public var endsOnCancellation: Bool { true }
    /// Closes the socket and removes its file at once, from any thread: no further central arrives.
    public func stop() { loop.stop() }
}
