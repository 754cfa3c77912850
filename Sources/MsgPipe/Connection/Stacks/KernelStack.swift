public import BLELink
import GATT
import Transport

/// The kernel backend: the kernel's L2CAP ATT channel and mgmt socket directly, bluetoothd must not hold the
/// adapter. Applies the connection parameters of the options' `PipeBackend.kernel(_:)` (or
/// `PipeBackend.auto(kernel:)`) before each connect, and carries the data
/// over the peripheral's LE credit-based channel where `MessagePipe.Options.linkMode` allows it.
///
/// ```swift
/// let pipe = try await MessagePipe.connect(to: "kiosk", over: KernelStack(), options: options)
/// ```
public struct KernelStack: PipeStack {
    /// Told each connection's bearer, the parameters loaded for it and the peer's accepted updates.
    let observation: LinkObservation?

    public init() {
        self.init(observation: nil)
    }

    init(observation: LinkObservation?) {
        self.observation = observation
    }

    /// A central link to `address`: msgpipe's GATT client in link mode gatt, otherwise a
    /// ``ChannelCentralLink`` that takes the published channel per connection. A `unix:` address is
    /// ``SocketStack``'s.
    public func centralLink(to address: PipeAddress, options: MessagePipe.Options) async throws -> any CentralLink {
        guard case let .bluetooth(text) = address else {
            return try await SocketStack().centralLink(to: address, options: options)
        }
        let (target, observation) = (CentralTarget(text), observation)
        guard options.linkMode != .gatt else {
            let gatt = GATTLink(profile: options.profile)
            return ConnectingLink(base: gatt) { deadline in
                let (socket, _) = try await Self.connectedSocket(
                    to: target, within: ContinuousClock.now.duration(to: deadline), options: options, observation: observation)
                let bearer = try ATTBearer(adopting: socket.fileDescriptor)
                observation?.connected(phy: { bearer.phy })
                try await gatt.connect(bearer)
                return "\(socket.peer)"
            }
        }
        let channelLink = ChannelCentralLink(profile: options.profile, mode: options.linkMode, framed: options.format == .msgpipe)
        return ConnectingLink(base: channelLink) { deadline in
            let (socket, adapter) = try await Self.connectedSocket(
                to: target, within: ContinuousClock.now.duration(to: deadline), options: options, observation: observation)
            let bearer = try ATTBearer(adopting: socket.fileDescriptor)
            observation?.connected(phy: { bearer.phy })
            let carrier = try await channelLink.connect(
                bearer, peer: socket.peer, local: adapter, security: options.security,
                timeout: max(.seconds(2), ContinuousClock.now.duration(to: deadline)))
            options.note(.detail, "\(socket.peer): data over \(carrier)")
            return "\(socket.peer)"
        }
    }

    /// A ``KernelAcceptor`` advertising `address`'s name with msgpipe's own GATT server on the kernel's ATT
    /// channel. A `unix:` address is ``SocketStack``'s.
    public func acceptor(at address: PipeAddress, options: MessagePipe.Options) -> any LinkAcceptor {
        guard case let .bluetooth(name) = address else { return SocketStack().acceptor(at: address, options: options) }
        return KernelAcceptor(name: name, options: options)
    }

    /// One connect attempt within `timeout`: resolves `target` (scanning for a name) and connects the ATT
    /// channel; blocking calls run on a thread of their own. The scan and the connect take the adapter's turn
    /// in ``ConnectQueue`` (one LE connection creation at a time per adapter); the attempt's `timeout` starts
    /// with the turn, so waiting behind another peer does not shorten it. Throws a ``BluetoothError``, or
    /// `CancellationError` when the task is cancelled while it waits for the turn.
    private static func connectedSocket(
        to target: CentralTarget, within timeout: Duration, options: MessagePipe.Options, observation: LinkObservation?
    ) async throws -> (ConnectedATTSocket, BluetoothAdapter) {
        let service = AdvertisedServiceUUID(options.profile.service.description)
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
                observation?.connecting(controller: central.adapter.index, makeWatch: Self.parameterWatch)
                if let request = options.backend.kernelOptions?.requestedConnectionParameters {
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

    /// The kernel's New Connection Parameter events of `controller`, each passed to `onAccepted` as the peer and
    /// its parameters (events whose values break a rule are dropped); nil when the mgmt socket cannot be opened.
    static func parameterWatch(
        controller: UInt16, onAccepted: @escaping @Sendable (BluetoothPeer, ConnectionParameters) -> Void
    ) -> (any PeerUpdateSource)? {
        try? ConnectionParameterWatch(controller: controller, onEvent: acceptedParameters(onAccepted))
    }

    /// Passes each New Connection Parameter event to `onAccepted` as the peer and its parameters; drops an
    /// event whose values break a rule.
    static func acceptedParameters(
        _ onAccepted: @escaping @Sendable (BluetoothPeer, ConnectionParameters) -> Void
    ) -> @Sendable (NewConnectionParameter) -> Void {
        { event in
            if let parameters = try? event.connectionParameters() { onAccepted(event.peer, parameters) }
        }
    }
}

extension ConnectionParameterWatch: PeerUpdateSource {}
