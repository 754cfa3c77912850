public import BLELink
import Framing
import GATT
import Transport

/// The central's side of the connection layer: makes the link for the chosen backend, connects it (scanning
/// for a name, retrying transient failures within the connect timeout) and brings it back after a drop.
/// ``MessagePipe/connect(to:options:)`` is built on it; use it directly to drive a ``PipeLink`` yourself.
///
/// ```swift
/// let connector = PipeConnector(to: PipeAddress("kiosk"), options: options)
/// let link = try await connector.makeLink()
/// let peer = try await connector.connect(link)
/// let transport = Transport(link: link)
/// ```
public struct PipeConnector: Sendable {
    public let address: PipeAddress
    public let options: MessagePipe.Options
    /// Told each Bluetooth connection's ATT bearer, the parameters loaded for it and the peer's accepted
    /// updates (a pipe's ``MessagePipe/linkParameters``).
    var observation: LinkObservation?

    /// How long a central waits after a drop before its first reconnect attempt: a Linux peripheral re-arms
    /// its advertising right after the disconnect, and a Create Connection in that moment can fail
    /// (docs/LAB.md). Small next to Transport's resume window.
    public static let settleAfterDrop: Duration = .milliseconds(250)

    public init(to address: PipeAddress, options: MessagePipe.Options) {
        self.address = address
        self.options = options
    }

    /// A new central link for the backend (not yet connected): msgpipe's own GATT client, or the relay of
    /// connections through bluetoothd. With a plain format every packet through bluetoothd is a Write Request
    /// (bluetoothd would queue Write Commands without bound and hide a loss). `receivesUnnumbered`: this side
    /// receives a plain format, for which bluetoothd's EATT may reorder values (advice only).
    public func makeLink(receivesUnnumbered: Bool = false) async throws -> any PipeLink {
        guard case .bluetooth = address else { return GATTLink(profile: options.profile) }
        let backend = try await ResolvedBackend.resolve(options.backend, busAddress: options.bluetoothdBus)
        options.note(.detail, backend.summary)
        guard case let .bluez(bus) = backend else {
            guard options.linkMode != .gatt else { return GATTLink(profile: options.profile) }
            return ChannelCentralLink(
                profile: options.profile, mode: options.linkMode, framed: options.format == .msgpipe)
        }
        if let request = options.requestedConnectionParameters {
            bus.close()
            throw MessagePipeError.connectionParametersThroughBluetoothd(request)
        }
        do {
            let adapter = try await BlueZAdapter.path(for: try AdapterSelector(options.adapter), bus: bus)
            let confirmedWrites = options.format != .msgpipe
            // Confirmed writes go one at a time: EATT neither slows nor reorders them.
            if !confirmedWrites, let note = BluetoothdConfiguration.eattNote(
                version: await BlueZVersion.running(bus: bus), unnumbered: receivesUnnumbered,
                eattOff: BluetoothdConfiguration.turnsEATTOff()) {
                options.note(.advice, note)
            }
            return BlueZCentralLink(
                bus: bus, adapter: adapter, confirmedWrites: confirmedWrites, mode: options.linkMode,
                framed: options.format == .msgpipe, security: options.security)
        } catch {
            bus.close()
            throw error
        }
    }

    /// Connects (or reconnects) `link` to the peer: MTU exchange, discovery of the profile, subscription.
    /// Returns the peer's description. Over Bluetooth a transient failure (the peer not found yet, a Create
    /// Connection that failed or timed out, the link lost before GATT was set up) is tried again with the
    /// backoff of ``MessagePipe/Options/reconnect`` while ``MessagePipe/Options/connectTimeout`` lasts, as a
    /// phone keeps trying; anything else is thrown at once. `onBearer` sees the ATT bearer before GATT starts
    /// on it (msgpipe's own GATT only: a benchmark reads the PHY from it).
    @discardableResult
    public func connect(_ link: any PipeLink, onBearer: (ATTBearer) -> Void = { _ in }) async throws -> String {
        let deadline = ContinuousClock.now + options.connectTimeout
        var failures = 0
        while true {
            do {
                return try await connectOnce(link, until: deadline, onBearer: onBearer)
            } catch {
                failures += 1
                let delay = options.reconnect.delay(afterFailures: failures)
                guard case .bluetooth = address, Self.isTransient(error), ContinuousClock.now + delay < deadline,
                      !Task.isCancelled else { throw error }
                options.note(.reconnect, "\(error); trying again in \(delay)")
                try await Task.sleep(for: delay)
            }
        }
    }

    /// True for a failure another attempt may fix.
    static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case let error as BluetoothError: error.isTransient
        case ATTError.transactionTimeout, ATTError.disconnected: true
        default: false
        }
    }

    private func connectOnce(
        _ link: any PipeLink, until deadline: ContinuousClock.Instant, onBearer: (ATTBearer) -> Void
    ) async throws -> String {
        switch (link, address) {
        case let (gattLink as GATTLink, .unix(path)):
            let bearer = try ATTBearer(adopting: try SeqPacketSocket.connect(path: path))
            onBearer(bearer)
            try await gattLink.connect(bearer)
            return "unix:\(path)"
        case let (gattLink as GATTLink, .bluetooth(target)):
            let (socket, _) = try await connectedSocket(to: CentralTarget(target), within: ContinuousClock.now.duration(to: deadline))
            let bearer = try ATTBearer(adopting: socket.fileDescriptor)
            observation?.connected(bearer)
            onBearer(bearer)
            try await gattLink.connect(bearer)
            return "\(socket.peer)"
        case let (channelLink as ChannelCentralLink, .bluetooth(target)):
            let (socket, adapter) = try await connectedSocket(
                to: CentralTarget(target), within: ContinuousClock.now.duration(to: deadline))
            let bearer = try ATTBearer(adopting: socket.fileDescriptor)
            observation?.connected(bearer)
            onBearer(bearer)
            let carrier = try await channelLink.connect(
                bearer, peer: socket.peer, local: adapter, security: options.security,
                timeout: max(.seconds(2), ContinuousClock.now.duration(to: deadline)))
            options.note(.detail, "\(socket.peer): data over \(carrier)")
            return "\(socket.peer)"
        case (is ChannelCentralLink, .unix), (is StreamLink, _):
            throw LinkError.io("an L2CAP channel link connects only over Bluetooth, and an accepted one cannot reconnect")
        case let (central as BlueZCentralLink, .bluetooth(target)):
            let (peer, carrier) = try await central.connect(
                CentralTarget(target), profile: options.profile, timeout: options.connectTimeout)
            options.note(.detail, "\(peer): data over \(carrier)")
            return peer
        case (is BlueZCentralLink, .unix):
            throw LinkError.io("a link through bluetoothd cannot connect to a UNIX socket")
        case (is AcquiredLink, _):
            throw LinkError.io("a link acquired from bluetoothd carries one connection and cannot reconnect")
        default:
            throw LinkError.io("a \(type(of: link)) cannot be connected by PipeConnector")
        }
    }

    /// Brings a dropped link back: after ``settleAfterDrop``, then with the backoff of
    /// ``MessagePipe/Options/reconnect``; false after `attempts` failures in a row (nil: until cancelled).
    public func reconnect(_ link: any PipeLink, attempts: Int?, onReconnected: (String) -> Void = { _ in }) async -> Bool {
        var failures = 0
        do { try await Task.sleep(for: Self.settleAfterDrop) } catch { return false }
        while attempts.map({ failures < $0 }) ?? true {
            let delay = options.reconnect.delay(afterFailures: failures)
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return false }
            }
            guard !Task.isCancelled else { return false }
            do {
                let peer = try await connect(link)
                options.note(.reconnect, "reconnected to \(peer)")
                onReconnected(peer)
                return true
            } catch {
                failures += 1
                options.note(.reconnect, "reconnect attempt \(failures)\(attempts.map { " of \($0)" } ?? "") failed: \(error)")
            }
        }
        return false
    }

    /// The kernel backend's connect, one attempt within `timeout`: resolves `target` (scanning for a name)
    /// and connects the ATT channel; blocking calls run on a thread of their own. The scan and the connect
    /// take the adapter's turn in ``ConnectQueue`` (one LE connection creation at a time per adapter); the
    /// attempt's `timeout` starts with the turn, so waiting behind another peer does not shorten it. Throws a
    /// ``BluetoothError``, or `CancellationError` when the task is cancelled while it waits for the turn.
    private func connectedSocket(
        to target: CentralTarget, within timeout: Duration
    ) async throws -> (ConnectedATTSocket, BluetoothAdapter) {
        let (options, service, observation) = (options, AdvertisedServiceUUID(options.profile.service.description), observation)
        let timeout = max(timeout, .seconds(1))
        let selector = try AdapterSelector(options.adapter)
        let adapter = try await BlockingCall.run { () throws(BluetoothError) in
            try BluetoothAdapter.resolve(selector, using: try ManagementSocket())
        }
        let connected = try await ConnectQueue.shared(for: adapter.name).run { () async throws(BluetoothError) in
            try await BlockingCall.run { () throws(BluetoothError) in
                let central = try BLECentral(
                    adapter: .index(adapter.index), security: options.security,
                    connectTimeout: timeout, scanTimeout: timeout, backoff: ReconnectBackoff(attempts: 1))
                var target = target
                observation?.connecting(controller: central.adapter.index)
                if let request = options.requestedConnectionParameters {
                    // The peer's entry must be loaded before LE Create Connection, so resolve a name first.
                    let peer = try central.resolve(target, service: service)
                    let loaded = try ConnectionParameterSetup.prepareConnection(
                        to: peer, request: request, controller: central.adapter.index, using: try ManagementSocket())
                    options.note(.detail, "\(peer): requested \(loaded.map(\.description) ?? "")"
                        + "\(request.phy.map { "\(loaded == nil ? "" : ", ")preferring PHY \($0)" } ?? "")")
                    observation?.requested(loaded)
                    target = .peer(peer)
                }
                let socket = try central.connect(to: target, service: service).handOver()
                observation?.connected(to: socket.peer)
                return (socket, central.adapter)
            }
        }
        guard let connected else { throw CancellationError() }  // cancelled while it waited for the turn
        return connected
    }
}
