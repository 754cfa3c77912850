public import GATT
public import MemoryLinks
import Synchronization

/// A central and a peripheral ``GATTLink`` joined over a pair of connected ATT bearers, connected. The connection
/// can be cut and made again over a fresh pair, so it is also the ``LinkConnectionControl`` that lets a
/// `FaultInjectingLink` exercise Transport's resume over real GATT. GATTTests joins them in memory,
/// BLELinkTests over a SEQPACKET socketpair.
public final class GATTLinkPair: LinkConnectionControl {
    public typealias BearerPair = @Sendable () throws -> (any ATTConnection, any ATTConnection)

    public static let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247)
    /// What the pair's peripheral serves: like `listen`, its largest MTU, so the negotiated ATT_MTU alone
    /// decides the packet size (a smaller one would cap the central's writes, PROTOCOL.md 5.2).
    public static let servedInfo = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 517)

    public let central: GATTLink
    public let peripheral: GATTLink
    private let serverMTU: Int
    private let centralMTU: Int
    private let makeBearers: BearerPair
    private let reconnectFailed: @Sendable (any Error) -> Void
    private let serving = Mutex<Task<Void, Never>?>(nil)

    /// Joins the links over `bearers()` (central end first); `reconnectFailed` reports a failed ``reconnect()``.
    public init(
        profile: GATTServiceProfile = .msgpipe, serverMTU: Int = 247, centralMTU: Int = 517,
        bearers: @escaping BearerPair, reconnectFailed: @escaping @Sendable (any Error) -> Void
    ) async throws {
        central = GATTLink(profile: profile)
        peripheral = GATTLink(profile: profile)
        self.serverMTU = serverMTU
        self.centralMTU = centralMTU
        makeBearers = bearers
        self.reconnectFailed = reconnectFailed
        try await connect()
    }

    /// A new bearer pair: the peripheral serves one end, the central connects over the other.
    public func connect() async throws {
        let (a, b) = try makeBearers()
        let configuration = GATTServer.Configuration(maximumMTU: serverMTU)
        let task = Task { [peripheral] in await peripheral.serve(b, info: Self.servedInfo, configuration: configuration) }
        serving.withLock { $0 = task }
        try await central.connect(a, mtu: centralMTU)
    }

    /// Cuts the bearer pair; returns once both links reported `.disconnected`.
    public func disconnect(reason: String) async {
        await central.disconnect()
        await servingEnded()
    }

    public func reconnect() async {
        do { try await connect() } catch { reconnectFailed(error) }
    }

    /// Returns once the peripheral stopped serving the current bearer pair.
    public func servingEnded() async {
        await serving.withLock { $0.take() }?.value
    }

    public func close() async {
        await central.close()
        await peripheral.close()
        await servingEnded()
    }
}
