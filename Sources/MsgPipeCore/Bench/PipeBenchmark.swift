public import BluetoothCore
import GATT
import Logging
import Transport

/// Measures msgpipe on a real link, either way round: centrals that each send their messages to a listener
/// (``sendAsCentrals(_:)``), or a peripheral that sends them to several subscribed centrals at once, as
/// `send --name` does (``sendAsPeripheral(_:centrals:onReady:)``). A message counts once the receiver acknowledged it
/// through Transport (its checks and reassembly passed). `msgpipe bench` over a real link is built on it.
///
/// ```swift
/// let bench = PipeBenchmark(size: 1 << 20, messages: 10) { central, message in payload(central, message) }
/// let report = await bench.sendAsCentrals([PipeConnector(to: PipeAddress("kiosk"), options: options)])
/// for line in report.lines { print(line.index.map(String.init) ?? "all", line.goodputKbps, "kbit/s") }
/// ```
public struct PipeBenchmark: Sendable {
    /// Bytes per message.
    public let size: Int
    /// Messages each central's transfer sends.
    public let messages: Int
    /// Message `message` (0-based) of transfer `central` (0-based): `size` bytes.
    public let body: @Sendable (_ central: Int, _ message: Int) -> [UInt8]

    public init(size: Int, messages: Int, body: @escaping @Sendable (_ central: Int, _ message: Int) -> [UInt8]) {
        self.size = size
        self.messages = messages
        self.body = body
    }

    /// Why one transfer stopped early.
    public enum Failure: Error {
        /// The link could not be made or connected.
        case connect(any Error)
        /// Message `index` was not acknowledged.
        case message(index: Int, any Error)
        /// The listener takes messages of at most `limit` bytes (its info characteristic), fewer than the size.
        case tooLarge(limit: Int)
    }

    /// Why the peripheral measured nothing.
    public enum PeripheralError: Error, CustomStringConvertible {
        /// Fewer centrals subscribed than were waited for before the accept loop ended.
        case centralsMissing(subscribed: Int, expected: Int)

        public var description: String {
            switch self {
            case let .centralsMissing(subscribed, expected): "\(subscribed) of \(expected) centrals subscribed"
            }
        }
    }

    /// What one transfer measured.
    public struct Result: Sendable {
        /// The transfer's number: the connector's position, or (as peripheral) the order transfers began in.
        public var index: Int
        /// The peer's description (empty if it never connected).
        public var peer = ""
        /// The ATT_MTU, known exactly below 512-byte packets (nil: never connected).
        public var mtu: Int?
        /// The LE PHYs, where the backend tells them (``PipeLink/phy``).
        public var phy: LinkPHY?
        /// What carried the data as central over Bluetooth (nil: a UNIX socket, or the peripheral).
        public var carrier: Carrier?
        public var messagesDelivered = 0
        public var payloadBytes = 0
        /// Why the transfer stopped early (nil: every message was acknowledged).
        public var failure: Failure?
        /// When the transfer began and ended (nil: it never began).
        public var span: Range<ContinuousClock.Instant>?

        public init(index: Int) { self.index = index }

        /// The transfer's seconds (0 when it never began).
        public var seconds: Double { span.map { PipeBenchmark.seconds($0.lowerBound.duration(to: $0.upperBound)) } ?? 0 }
        public var succeeded: Bool { failure == nil }
        /// Messages sent: those acknowledged, and the one that failed.
        public var messagesSent: Int { messagesDelivered + (succeeded ? 0 : 1) }
    }

    /// Every transfer's result, in index order, and the wall time of the transfers together.
    public struct Report: Sendable {
        public var results: [Result]
        public var seconds: Double
        /// Messages each transfer was to send.
        public var messages: Int

        public init(results: [Result], seconds: Double, messages: Int) {
            self.results = results
            self.seconds = seconds
            self.messages = messages
        }

        /// One line per transfer, then with several transfers one for all of them: counts and bytes summed
        /// over the wall time ``seconds``, the MTU where every transfer that knows one had the same, the PHY where
        /// every transfer had the same, the first peer.
        public var lines: [Line] {
            var lines = results.map { result in
                Line(index: result.index, peer: result.peer, mtu: result.mtu, phy: result.phy, carrier: result.carrier,
                     messagesSent: result.messagesSent, messagesDelivered: result.messagesDelivered,
                     payloadBytes: result.payloadBytes, seconds: result.seconds,
                     completed: result.succeeded && result.messagesDelivered == messages)
            }
            guard lines.count > 1 else { return lines }
            let mtus = Set(lines.compactMap(\.mtu)), phys = lines.map(\.phy)
            lines.append(Line(
                index: nil, peer: lines[0].peer, mtu: mtus.count == 1 ? mtus.first : nil,
                phy: phys.allSatisfy { $0 == phys[0] } ? phys[0] : nil, carrier: nil,
                messagesSent: lines.reduce(0) { $0 + $1.messagesSent },
                messagesDelivered: lines.reduce(0) { $0 + $1.messagesDelivered },
                payloadBytes: lines.reduce(0) { $0 + $1.payloadBytes }, seconds: seconds,
                completed: lines.allSatisfy(\.completed)))
            return lines
        }
    }

    /// What one transfer, or all of them together, measured: one line of `msgpipe bench`'s report.
    public struct Line: Sendable, Equatable {
        /// The transfer's index; nil for all transfers together.
        public var index: Int?
        public var peer: String
        /// The ATT_MTU (``Result/mtu``); nil where unknown or, for all transfers, where they differ.
        public var mtu: Int?
        /// The LE PHYs (``Result/phy``); nil where unknown or, for all transfers, where they differ.
        public var phy: LinkPHY?
        /// What carried the data (``Result/carrier``); nil for all transfers together.
        public var carrier: Carrier?
        public var messagesSent: Int
        public var messagesDelivered: Int
        public var payloadBytes: Int
        public var seconds: Double
        /// Every message was acknowledged.
        public var completed: Bool

        /// Payload kilobits per second over ``seconds`` (0 when no time passed).
        public var goodputKbps: Double { seconds > 0 ? Double(payloadBytes * 8) / seconds / 1000 : 0 }
        /// Acknowledged messages per second (0 when no time passed).
        public var messagesPerSecond: Double { seconds > 0 ? Double(messagesDelivered) / seconds : 0 }
    }

    /// Runs one central transfer per connector, all at once (connector `i` sends transfer `i`).
    public func sendAsCentrals(_ connectors: [PipeConnector]) async -> Report {
        let started = ContinuousClock.now
        let results = await withTaskGroup(of: Result.self) { group in
            for (index, connector) in connectors.enumerated() {
                group.addTask { await sendAsCentral(index, through: connector) }
            }
            return await group.reduce(into: [Result]()) { $0.append($1) }.sorted { $0.index < $1.index }
        }
        return Report(results: results, seconds: Self.seconds(ContinuousClock.now - started), messages: messages)
    }

    /// Serves the msgpipe service through `acceptor`, waits until `centrals` centrals subscribed, then sends
    /// each its transfer at once, one Transport session per central. `onReady` says where it listens or
    /// advertises. The wall time runs from the first
    /// transfer's start to the last one's end. Throws what the accept loop threw, or
    /// ``PeripheralError/centralsMissing(subscribed:expected:)``.
    public func sendAsPeripheral(
        _ acceptor: any LinkAcceptor, centrals: Int, onReady: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> Report {
        var limits = TransportListener.Limits()
        limits.maximumSessions = 2 * centrals
        limits.resumeWindow = .seconds(60)
        let options = acceptor.options
        let listener = TransportListener(
            options: options.transportOptions(largestToSend: size), limits: limits, logger: options.logger)
        let shared = PeripheralState()
        let info = options.serviceInfo(maximumMessageSize: max(size, 16 << 20))
        let accepting = Task {
            do {
                try await acceptor.acceptLinks(
                    info: info, connections: nil, maximumConcurrent: 2 * centrals, centralsAtOnce: centrals,
                    unnumbered: false, onReady: onReady
                ) { link, peer in
                    shared.links.withLock { $0[peer] = link }
                    await Self.accept(link, peer: peer, into: listener) { size in shared.packetSizes.withLock { $0[peer] = size } }
                }
            } catch is CancellationError {
            } catch ATTError.cancelled {
            } catch {
                shared.failure.withLock { $0 = error }
                await listener.close()
            }
        }
        var sessions: [TransportSession] = []
        for await session in listener.sessions {
            sessions.append(session)
            if sessions.count == centrals { break }
        }
        let served = await withTaskGroup(of: Result.self) { group in
            for central in sessions {
                group.addTask {
                    var result = Result(index: shared.order.withLock { index in defer { index += 1 }; return index })
                    result.peer = central.peer
                    // The PHY after each acknowledged message: the central may close its link right after the last.
                    let link = shared.links.withLock { $0[central.peer] }
                    await send(over: central.transport, transfer: result.index, into: &result) { result in
                        if let phy = link?.phy { result.phy = phy }
                    }
                    result.mtu = Self.mtu(packetSize: shared.packetSizes.withLock { $0[central.peer] })
                    return result
                }
            }
            return await group.reduce(into: [Result]()) { $0.append($1) }
        }
        await listener.close()
        acceptor.stop()
        accepting.cancel()
        if acceptor.endsOnCancellation { await accepting.value }
        if let error = shared.failure.withLock({ $0 }) { throw error }
        guard served.count == centrals else { throw PeripheralError.centralsMissing(subscribed: served.count, expected: centrals) }
        let results = served.sorted { $0.index < $1.index }
        let spans = results.compactMap(\.span)
        guard let first = spans.map(\.lowerBound).min(), let last = spans.map(\.upperBound).max() else {
            return Report(results: results, seconds: 0, messages: messages)
        }
        return Report(results: results, seconds: Self.seconds(first.duration(to: last)), messages: messages)
    }

    /// What the peripheral's connections share: each central's packet size and link, the accept loop's
    /// failure, the order in which transfers start.
    private final class PeripheralState: Sendable {
        let packetSizes = Locked<[String: Int]>([:])
        let links = Locked<[String: any PipeLink]>([:])
        let failure = Locked<(any Error)?>(nil)
        let order = Locked(0)
    }

    private func sendAsCentral(_ index: Int, through connector: PipeConnector) async -> Result {
        var result = Result(index: index)
        if case let .bluetooth(name) = connector.address { result.peer = name }
        let link: any CentralLink
        do {
            link = try await connector.makeLink()
            result.peer = try await connector.connect(link)
        } catch {
            result.failure = .connect(error)
            return result
        }
        if case .bluetooth = connector.address { result.carrier = link.carrier }
        if let info = link.peerInfo, size > Int(info.maximumMessageSize) {
            result.failure = .tooLarge(limit: Int(info.maximumMessageSize))
            await link.close()
            return result
        }
        var options = TransportOptions()
        options.endpoint.maximumMessageSize = max(options.endpoint.maximumMessageSize, size)
        let packetSize = Locked<Int?>(nil)
        let transport = Self.transport(over: link, options: options, logger: connector.options.logger) { size in
            packetSize.withLock { $0 = size }
        }
        await send(over: transport, transfer: index, into: &result)
        result.mtu = Self.mtu(packetSize: packetSize.withLock { $0 })
        // After the transfer: a controller may move the link to 2M once it is up.
        result.phy = link.phy
        await transport.close()
        await link.close()
        return result
    }

    /// Sends transfer `transfer`'s messages in order over `transport`, counting what the receiver acknowledged;
    /// `acknowledged` runs after each.
    private func send(
        over transport: Transport, transfer: Int, into result: inout Result, acknowledged: (inout Result) -> Void = { _ in }
    ) async {
        let started = ContinuousClock.now
        for message in 0 ..< messages {
            do {
                try await transport.send(body(transfer, message))
            } catch {
                result.failure = .message(index: message, error)
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
    static func mtu(packetSize: Int?) -> Int? {
        packetSize.map { $0 < 512 ? $0 + 3 : ATTOpcode.maximumMTU }
    }

    /// A Transport over `link` that tells `onPacketSize` each packet size the link reports.
    private static func transport(
        over link: some PipeLink, options: TransportOptions, logger: Logger, onPacketSize: @escaping @Sendable (Int) -> Void
    ) -> Transport {
        Transport(link: observing(link, onPacketSize: onPacketSize), options: options, logger: logger)
    }

    /// Gives `link` to `listener`, telling `onPacketSize` each packet size it reports.
    private static func accept(
        _ link: some PipeLink, peer: String, into listener: TransportListener, onPacketSize: @escaping @Sendable (Int) -> Void
    ) async {
        await listener.accept(observing(link, onPacketSize: onPacketSize), peer: peer)
    }

    /// `link`, telling `onPacketSize` each packet size it reports.
    private static func observing<L: PipeLink>(_ link: L, onPacketSize: @escaping @Sendable (Int) -> Void) -> ObservedLink<L> {
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
