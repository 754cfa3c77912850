import BLELink
import Logging
import MsgPipe
import Simulator
import Synchronization

/// `msgpipe bench` on a real link (`--link unix:PATH`, or Bluetooth), either way round:
/// - as the central (`--to`, default): `centrals` concurrent central connections from this process, each its
///   own ``GATTLink`` and ``Transport``, each sending `messages` messages of `size` bytes to a running
///   `msgpipe listen` (the peripheral receives);
/// - as the peripheral (`--name`, `--role peripheral`): serves the msgpipe service, waits until `centrals`
///   centrals (`msgpipe listen --to NAME`) subscribed, then sends the messages to every one of them at once
///   by notification (the centrals receive), as `send --name` does.
///
/// A message counts once the receiver acknowledged it through Transport (its CRC and reassembly checked).
struct BenchLink {
    let link: LinkOptions
    let role: LinkRole
    let size: Int
    let messages: Int
    let centrals: Int
    let seed: UInt64
    /// The connection parameters to ask for over Bluetooth (nil: the system's). No default: whoever makes a
    /// bench says which, so none are dropped unsaid.
    let connection: ConnectionParameterOptions?
    /// Several `--to`: central `i` connects to `peers[i]` (empty: every central to the one listener).
    var peers: [String] = []

    /// What one central measured.
    struct Result: Sendable {
        var index: Int
        var peer = ""
        var mtu: Int?
        /// The LE PHYs, where the kernel tells them (msgpipe's own GATT on the kernel's ATT channel).
        var phy: LinkPHY?
        /// What carried the data as central over Bluetooth: "gatt" or "l2cap" (nil: a UNIX socket, or the peripheral).
        var carrier: String?
        var messagesDelivered = 0
        var payloadBytes = 0
        var error: String?
        /// When this central's transfer began and ended (nil: it never began).
        var span: Range<ContinuousClock.Instant>?

        var seconds: Double { span.map { BenchLink.seconds($0.lowerBound.duration(to: $0.upperBound)) } ?? 0 }

        var goodputKbps: Double { seconds > 0 ? Double(payloadBytes * 8) / seconds / 1000 : 0 }
        var succeeded: Bool { error == nil }
    }

    /// Runs every central's transfer at once; returns their results in order and the wall time of the
    /// transfers (as the peripheral: from the moment all centrals subscribed), or nil when the peripheral
    /// could not serve or not every central subscribed (said on standard error).
    func run() async -> (results: [Result], seconds: Double)? {
        role == .peripheral ? await runPeripheral() : await runCentrals()
    }

    private func runCentrals() async -> (results: [Result], seconds: Double) {
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: Result.self) { group in
            for index in 0 ..< centrals {
                group.addTask { await runCentral(index) }
            }
            var results: [Result] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.index < $1.index }
        }
        return (results, Self.seconds(ContinuousClock.now - started))
    }

    /// The message bodies: the simulator's deterministic contents for the seed (central `i` uses seed + i).
    func scenario(central index: Int) -> TransferScenario {
        TransferScenario(link: BLELinkConfiguration(), seed: seed &+ UInt64(index), messageSize: size, messageCount: messages)
    }

    /// The peripheral: one Transport session per subscribed central, on the library's ``PipeAcceptor``.
    private func runPeripheral() async -> (results: [Result], seconds: Double)? {
        var logger = Logger(label: "msgpipe.bench")
        logger.logLevel = .warning
        let acceptor: PipeAcceptor
        var options: MessagePipe.Options
        do {
            options = try link.pipeOptions(format: .msgpipe, verbose: false, connection: connection)
            options.logger = logger
            acceptor = try link.acceptor(options)
        } catch {
            printError("cannot serve on \(link.displayName): \(cli: error)")
            return nil
        }
        var limits = TransportListener.Limits()
        limits.maximumSessions = 2 * centrals
        limits.resumeWindow = .seconds(60)
        let listener = TransportListener(
            options: options.transportOptions(largestToSend: size), limits: limits, logger: logger)
        let state = PeripheralState()
        let (packetSizes, bearers, failure) = (state.packetSizes, state.bearers, state.failure)
        let info = options.serviceInfo(maximumMessageSize: max(size, 16 << 20))
        let accepting = Task { [centrals] in
            do {
                try await acceptor.acceptLinks(
                    info: info, maximumConcurrent: 2 * centrals, centralsAtOnce: centrals, onReady: { printError($0) },
                    onBearer: { bearer, peer in bearers.withLock { $0[peer] = bearer } }
                ) { peerLink, peer in
                    await Self.accept(peerLink, peer: peer, into: listener) { size in packetSizes.withLock { $0[peer] = size } }
                }
            } catch is CancellationError {
            } catch ATTError.cancelled {
            } catch {
                failure.withLock { $0 = error }
                await listener.close()
            }
        }
        var sessions: [TransportSession] = []
        for await session in listener.sessions {
            sessions.append(session)
            if sessions.count == centrals { break }
        }
        let order = state.order
        let served = await withTaskGroup(of: Result.self) { group in
            for central in sessions {
                group.addTask {
                    var result = Result(index: order.withLock { index in defer { index += 1 }; return index })
                    result.peer = central.peer
                    // The PHY after each acknowledged message: the central may close its link right after the last.
                    let bearer = bearers.withLock { $0[central.peer] }
                    await send(over: central.transport, scenario: scenario(central: result.index), into: &result) { result in
                        if let phy = bearer?.phy { result.phy = phy }
                    }
                    result.mtu = Self.mtu(packetSize: packetSizes.withLock { $0[central.peer] })
                    return result
                }
            }
            return await group.reduce(into: [Result]()) { $0.append($1) }
        }
        await listener.close()
        acceptor.stop()
        accepting.cancel()
        if case .unix? = try? link.endpoint() { await accepting.value }
        if let error = failure.withLock({ $0 }) {
            printError("cannot serve on \(link.displayName): \(cli: error)")
            return nil
        }
        guard served.count == centrals else {
            printError("\(served.count) of \(centrals) centrals subscribed")
            return nil
        }
        let results = served.sorted { $0.index < $1.index }
        let spans = results.compactMap(\.span)
        let wall = spans.isEmpty ? 0 : Self.seconds(spans.map(\.lowerBound).min()!.duration(to: spans.map(\.upperBound).max()!))
        return (results, wall)
    }

    /// What the peripheral's connections share: each central's packet size and bearer, the accept loop's
    /// failure, the order in which transfers start.
    private final class PeripheralState: Sendable {
        let packetSizes = Locked<[String: Int]>([:])
        let bearers = Locked<[String: ATTBearer]>([:])
        let failure = Locked<(any Error)?>(nil)
        let order = Locked(0)
    }

    /// Sends the scenario's messages in order over `transport`, counting what the receiver acknowledged;
    /// `acknowledged` runs after each message the receiver acknowledged.
    private func send(
        over transport: Transport, scenario: TransferScenario, into result: inout Result,
        acknowledged: (inout Result) -> Void = { _ in }
    ) async {
        let started = ContinuousClock.now
        for message in 0 ..< messages {
            do {
                try await transport.send(scenario.message(message))
            } catch {
                result.error = "message \(message): \(cli: error)"
                break
            }
            result.messagesDelivered += 1
            result.payloadBytes += size
            acknowledged(&result)
        }
        result.span = started ..< ContinuousClock.now
    }

    /// The ATT_MTU of a packet size: a packet is min(ATT_MTU - 3, 512) bytes, so the MTU is known exactly
    /// below 512-byte packets.
    private static func mtu(packetSize: Int?) -> Int? {
        packetSize.map { $0 < 512 ? $0 + 3 : ATTOpcode.maximumMTU }
    }

    private func runCentral(_ index: Int) async -> Result {
        var result = Result(index: index)
        if !peers.isEmpty { result.peer = peers[index] }
        let connectFailure = { (error: any Error) in
            peers.isEmpty ? link.connectFailure(error) : "cannot connect to \(peers[index]): \(cli: error)"
        }
        let peerLink: any CentralLink
        let connector: PipeConnector
        let bearer = Locked<ATTBearer?>(nil)
        do {
            let options = try link.pipeOptions(format: .msgpipe, verbose: false, connection: connection)
            connector = peers.isEmpty ? try link.connector(options) : PipeConnector(to: PipeAddress(peers[index]), options: options)
            peerLink = try await connector.makeLink(onBearer: { found in bearer.withLock { $0 = found } })
        } catch {
            result.error = connectFailure(error)
            return result
        }
        let packetSize = Locked<Int?>(nil)
        do {
            result.peer = try await connector.connect(peerLink)
        } catch {
            result.error = connectFailure(error)
            return result
        }
        if case .bluetooth? = try? link.endpoint() { result.carrier = peerLink.carrier.rawValue }
        if let info = peerLink.peerInfo, size > Int(info.maximumMessageSize) {
            result.error = "--size \(size) exceeds the listener's maximum message size of \(info.maximumMessageSize)"
            await peerLink.close()
            return result
        }
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = max(options.endpoint.maximumMessageSize, size)
        let transport = Self.transport(over: peerLink, options: options) { size in packetSize.withLock { $0 = size } }
        await send(over: transport, scenario: scenario(central: index), into: &result)
        result.mtu = Self.mtu(packetSize: packetSize.withLock { $0 })
        // After the transfer: a controller may move the link to 2M once it is up.
        result.phy = bearer.withLock { $0 }?.phy
        await transport.close()
        await peerLink.close()
        return result
    }

    /// A Transport over `link` that tells `onPacketSize` each packet size the link reports.
    private static func transport(
        over link: some PipeLink, options: TransportOptions, onPacketSize: @escaping @Sendable (Int) -> Void
    ) -> Transport {
        Transport(link: observing(link, onPacketSize: onPacketSize), options: options, logger: Logger(label: "msgpipe.bench"))
    }

    /// Gives `link` to `listener`, telling `onPacketSize` each packet size it reports.
    private static func accept(
        _ link: some PipeLink, peer: String, into listener: TransportListener, onPacketSize: @escaping @Sendable (Int) -> Void
    ) async {
        await listener.accept(observing(link, onPacketSize: onPacketSize), peer: peer)
    }

    /// `link`, telling `onPacketSize` each packet size it reports.
    private static func observing<L: PipeLink>(
        _ link: L, onPacketSize: @escaping @Sendable (Int) -> Void
    ) -> ObservedLink<L> {
        ObservedLink(
            link,
            onEvent: { event in
                switch event {
                case let .connected(maximumPacketSize), let .maximumPacketSizeChanged(maximumPacketSize):
                    onPacketSize(maximumPacketSize)
                default: break
                }
            },
            onSent: { _ in })
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// A value behind a lock, shared by reference between tasks.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
