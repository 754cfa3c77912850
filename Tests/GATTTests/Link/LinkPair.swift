@testable import GATT
import MemoryLinks
import Synchronization
import Testing
import Transport

/// A central and a peripheral ``GATTLink`` joined over an in-memory ATT bearer pair, connected. The connection can be cut
/// and made again over a fresh pair, so it is also the ``LinkConnectionControl`` that lets a
/// `FaultInjectingLink` exercise Transport's resume over real GATT.
final class LinkPair: LinkConnectionControl {
    static let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247)

    let central: GATTLink
    let peripheral: GATTLink
    private let serverMTU: Int
    private let centralMTU: Int
    private let serving = Mutex<Task<Void, Never>?>(nil)

    init(profile: GATTServiceProfile = .msgpipe, serverMTU: Int = 247, centralMTU: Int = 517) async throws {
        central = GATTLink(profile: profile)
        peripheral = GATTLink(profile: profile)
        self.serverMTU = serverMTU
        self.centralMTU = centralMTU
        try await connect()
    }

    /// A new bearer pair: the peripheral serves one end, the central connects over the other.
    func connect() async throws {
        let (a, b) = bearerPair()
        let configuration = GATTServer.Configuration(maximumMTU: serverMTU)
        let task = Task { [peripheral] in await peripheral.serve(b, info: Self.info, configuration: configuration) }
        serving.withLock { $0 = task }
        try await central.connect(a, mtu: centralMTU)
    }

    /// Cuts the bearer pair; returns once both links reported `.disconnected`.
    func disconnect(reason: String) async {
        await central.disconnect()
        await servingEnded()
    }

    func reconnect() async {
        do { try await connect() } catch { Issue.record("reconnecting over a new bearer pair failed: \(error)") }
    }

    /// Returns once the peripheral stopped serving the current bearer pair.
    func servingEnded() async {
        await serving.withLock { $0.take() }?.value
    }

    func close() async {
        await central.close()
        await peripheral.close()
        await servingEnded()
    }
}
