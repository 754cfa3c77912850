import Backpressure
import BLELink
public import GATT
import Synchronization
import Transport

/// The peripheral's side of the connection layer: listens on a UNIX socket, or advertises the profile's
/// service over Bluetooth (through bluetoothd with the bluez backend), and hands each central's link to a
/// handler, several at once. `MessagePipe.advertise(name:options:)` is built on it.
///
/// ```swift
/// let acceptor = PipeAcceptor(at: .bluetooth("kiosk"), options: options)
/// try await acceptor.acceptLinks(info: options.serviceInfo()) { link, peer in
///     await TransportListener().accept(link, peer: peer)
/// }
/// ```
public final class PipeAcceptor: Sendable {
    public let address: PipeAddress
    public let options: MessagePipe.Options
    /// Actions that undo what a running accept loop set up outside the process (socket file, advertising).
    private let stopping = Mutex<(stopped: Bool, actions: [@Sendable () -> Void])>((false, []))

    /// `address`: `.unix(path:)` listens on that socket; `.bluetooth(name)` advertises `name`.
    public init(at address: PipeAddress, options: MessagePipe.Options) {
        self.address = address
        self.options = options
    }

    /// Removes the socket file or stops advertising at once, from any thread (a signal handler's task): no
    /// further central can arrive. The accept loop itself ends when its task is cancelled.
    public func stop() {
        let actions = stopping.withLock { state -> [@Sendable () -> Void] in
            state.stopped = true
            defer { state.actions = [] }
            return state.actions
        }
        for action in actions.reversed() { action() }
    }

    private func onStop(_ action: @escaping @Sendable () -> Void) {
        let stopped = stopping.withLock { state -> Bool in
            if !state.stopped { state.actions.append(action) }
            return state.stopped
        }
        if stopped { action() }
    }

    /// Accepts centrals and runs `handle` for each in a child task, up to `maximumConcurrent` at once (the next
    /// one is accepted when one leaves), until `connections` were accepted (nil: until cancelled); returns once
    /// the last `handle` returned. The link is connected when `handle` starts and closed after it returns; on
    /// msgpipe's own GATT it is served (with `info`) while `handle` runs. `onReady` says where it listens or
    /// advertises. `centralsAtOnce` above 1 fails at once through a bluetoothd that
    /// serves one central at a time (before 5.76). `unnumbered`: a plain format is carried, which cannot put
    /// values back in order (advice beside a bluetoothd with EATT on). Over Bluetooth, unless the link mode is
    /// gatt, it also listens on an LE credit-based channel at a dynamic PSM, published in the service (PROTOCOL.md
    /// 5.9), and hands each central's channel to `handle` as a `StreamLink`.
    public func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int? = nil, maximumConcurrent: Int = 1, centralsAtOnce: Int = 1,
        unnumbered: Bool = false, onReady: (String) -> Void = { _ in },
        handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        var backend = ResolvedBackend.kernel
        if case .bluetooth = address {
            backend = try await ResolvedBackend.resolve(options.backend, busAddress: options.bluetoothdBus)
            options.note(.detail, backend.summary)
        }
        var restoreDefaults: (@Sendable () -> Void)?
        if case .bluetooth = address {
            let request = options.requestedConnectionParameters
            if let request {
                guard case .kernel = backend else {
                    if case let .bluez(bus) = backend { bus.close() }
                    throw MessagePipeError.connectionParametersThroughBluetoothd(request)
                }
                restoreDefaults = try await setPeripheralParameters(request)
            }
            if request?.hasConnectionParameters != true {
                restoreDefaults = await widenPeripheralInterval(backend: backend)
            }
        }
        defer { restoreDefaults?() }
        var info = info
        let channels: L2CAPChannel.SharedListener?
        do {
            channels = try await openChannelListener()
        } catch {
            if case let .bluez(bus) = backend { bus.close() }
            throw error
        }
        info.psm = channels?.psm
        let served = info
        let (options, channelOnly) = (options, options.linkMode == .l2cap)
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let channels {
                options.note(.detail, "L2CAP channel on PSM 0x\(String(channels.psm, radix: 16)) beside GATT")
                group.addTask {
                    try await self.acceptChannels(channels, maximumConcurrent: maximumConcurrent, handle: handle)
                }
            }
            do {
                if case let .bluez(bus) = backend {
                    try await acceptAcquiredLinks(
                        bus: bus, info: served, connections: connections, maximumConcurrent: maximumConcurrent,
                        centralsAtOnce: centralsAtOnce, unnumbered: unnumbered, onReady: onReady
                    ) { link, peer in
                        guard channelOnly else { return await handle(link, peer) }
                        options.note(.warning, "\(peer) asked for data over GATT; serving the L2CAP channel only")
                        await link.disconnect()
                    }
                } else {
                    try await serveGATT(
                        info: served, connections: connections, maximumConcurrent: maximumConcurrent, onReady: onReady,
                        handle: handle)
                }
            } catch {
                channels?.stop()
                throw error
            }
            channels?.stop()
            try await group.waitForAll()
        }
    }

    /// Kernel backend: makes `request` the adapter's LE connection defaults, so the kernel asks each central
    /// for that range (an L2CAP Connection Parameter Update Request when the central's interval lies
    /// outside it). Returns what puts the previous defaults back, once, also run by ``stop()``: the defaults
    /// are the adapter's, seen by every program on it.
    private func setPeripheralParameters(_ request: ConnectionParameterRequest) async throws -> (@Sendable () -> Void)? {
        let options = options
        let (controller, set) = try await BlockingCall.run { () throws(BluetoothError) in
            let management = try ManagementSocket()
            let adapter = try BluetoothAdapter.resolve(try AdapterSelector(options.adapter), using: management)
            return (adapter.index, try ConnectionParameterSetup.setPeripheralDefaults(
                request, controller: adapter.index, using: management))
        }
        if let phy = request.phy { options.note(.detail, "hci\(controller): preferring PHY \(phy)") }
        guard let set else { return nil }
        options.note(.detail, "hci\(controller): asking centrals for \(set.requested) (adapter default until stopped; was \(set.previous))")
        return restoring(set.previous, controller: controller) { previous, management throws(BluetoothError) in
            try ConnectionParameterSetup.restoreDefaults(previous, controller: controller, using: management)
        }
    }

    /// The advice note of a peripheral through bluetoothd, which cannot widen the adapter's interval range.
    package static let bluetoothdIntervalAdvice = "through bluetoothd this peripheral's kernel asks each central whose "
        + "connection interval lies outside the adapter's default range (30-50 ms unless [LE] MinConnectionInterval/"
        + "MaxConnectionInterval in /etc/bluetooth/main.conf say otherwise) to move into it; the kernel backend "
        + "with CAP_NET_ADMIN keeps the central's interval"

    /// Without an interval of its own the peripheral leaves each central's interval as it is: on the kernel
    /// backend the adapter's default interval range is widened while serving
    /// (``ConnectionParameterSetup/widenPeripheralInterval(controller:using:)``), so the kernel sends no
    /// L2CAP Connection Parameter Update Request for an interval inside it; returns what puts the previous
    /// range back, once, also run by ``stop()``. Where that cannot be done (through bluetoothd, without
    /// CAP_NET_ADMIN, a kernel before 5.8) one advice note says so and serving goes on: the kernel then asks
    /// each central outside the adapter's range for that range, as before.
    private func widenPeripheralInterval(backend: ResolvedBackend) async -> (@Sendable () -> Void)? {
        let options = options
        guard case .kernel = backend else {
            options.note(.advice, Self.bluetoothdIntervalAdvice)
            return nil
        }
        let widened: (controller: UInt16, set: (previous: ConnectionParameters, widened: ConnectionParameters)?)
        do {
            widened = try await BlockingCall.run { () throws(BluetoothError) in
                let management = try ManagementSocket()
                let adapter = try BluetoothAdapter.resolve(try AdapterSelector(options.adapter), using: management)
                return (adapter.index, try ConnectionParameterSetup.widenPeripheralInterval(
                    controller: adapter.index, using: management))
            }
        } catch {
            options.note(.advice, "the adapter's default connection interval range stays as it is (\(error)): its kernel "
                + "asks each central whose interval lies outside that range to move into it")
            return nil
        }
        let controller = widened.controller
        guard let set = widened.set else { return nil }
        options.note(.detail, "hci\(controller): default connection interval range \(set.widened) until stopped (was "
            + "\(set.previous)), so centrals keep their interval")
        return restoring(set.previous, controller: controller) { previous, management throws(BluetoothError) in
            try ConnectionParameterSetup.restoreInterval(previous, controller: controller, using: management)
        }
    }

    /// What runs `restore` with `previous` once (also at ``stop()``), a failure noted as a warning.
    private func restoring(
        _ previous: ConnectionParameters, controller: UInt16,
        _ restore: @escaping @Sendable (ConnectionParameters, ManagementSocket) throws(BluetoothError) -> Void
    ) -> @Sendable () -> Void {
        let options = options
        let done = OnceFlag()
        let action: @Sendable () -> Void = {
            guard done.claim() else { return }
            do throws(BluetoothError) {
                try restore(previous, try ManagementSocket())
            } catch {
                options.note(.warning, "could not put hci\(controller)'s connection defaults back to \(previous): \(error)")
            }
        }
        onStop(action)
        return action
    }

    /// msgpipe's own GATT server for each central (UNIX socket or the kernel's ATT channel), each one's link to
    /// `handle`; in link mode l2cap GATT only publishes the PSM and a central that subscribes is hung up on.
    private func serveGATT(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, onReady: (String) -> Void,
        handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        let (options, profile, channelOnly) = (options, options.profile, options.linkMode == .l2cap)
        // On the kernel's ATT channel the kernel lets a central write before its link is encrypted: msgpipe's
        // GATT server refuses it (Insufficient Authentication) until the link has the security asked for.
        var configuration = GATTServer.Configuration()
        if case .bluetooth = address { configuration.requiredSecurity = options.security.requiredLinkSecurity }
        try await acceptBearers(connections: connections, maximumConcurrent: maximumConcurrent, onReady: onReady) {
            [configuration] bearer, peer in
            let gattLink = GATTLink(profile: profile)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    guard channelOnly else { return await handle(gattLink, peer) }
                    for await event in gattLink.events {
                        guard case .connected = event else { continue }
                        options.note(.warning, "\(peer) asked for data over GATT; serving the L2CAP channel only")
                        await gattLink.disconnect()
                    }
                }
                await gattLink.serve(bearer, info: info, configuration: configuration)
                await gattLink.close()
            }
        }
    }

    /// The channel listener a peripheral opens beside GATT, with either backend (nil in link mode gatt or on a
    /// UNIX socket): a free dynamic PSM on the adapter, at the options' security level.
    /// In link mode auto a channel that cannot be opened (no mgmt access, a kernel without LE channels) is
    /// a warning and GATT serves alone; in link mode l2cap it throws.
    private func openChannelListener() async throws -> L2CAPChannel.SharedListener? {
        guard case .bluetooth = address, options.linkMode != .gatt else { return nil }
        let options = options
        let listener: L2CAPChannel.SharedListener
        do {
            listener = try await BlockingCall.run { () throws(BluetoothError) in
                let adapter = try BluetoothAdapter.resolve(try AdapterSelector(options.adapter), using: try ManagementSocket())
                return try L2CAPChannel.SharedListener(L2CAPChannel.Listener(adapter: adapter, security: options.security))
            }
        } catch {
            guard options.linkMode == .auto else { throw MessagePipeError.channelUnavailable("cannot listen: \(error)") }
            options.note(.warning, "no L2CAP channel (\(error)); serving GATT only")
            return nil
        }
        onStop { listener.stop() }
        return listener
    }

    /// Accepts centrals' channels, each a `StreamLink` given to `handle` in a child task, up to
    /// `maximumConcurrent` at once (a channel rides on a central's connection, which GATT's accounting counts
    /// too); returns once `listener` was stopped and the last `handle` returned.
    private func acceptChannels(
        _ listener: L2CAPChannel.SharedListener, maximumConcurrent: Int,
        handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        let (options, slots) = (options, CreditPool(capacity: max(1, maximumConcurrent)))
        try await withThrowingDiscardingTaskGroup { group in
            while true {
                try await slots.acquire()
                let socket: ConnectedATTSocket?
                do {
                    socket = try await BlockingCall.run { () throws(BluetoothError) in try listener.accept() }
                } catch {
                    slots.release()
                    throw error
                }
                guard let socket else {
                    slots.release()
                    return
                }
                group.addTask {
                    defer { slots.release() }
                    let unit = L2CAPChannel.sendUnit(socket.fileDescriptor) ?? ATTOpcode.defaultMTU
                    let peer = "\(socket.peer)"
                    do {
                        let link = try StreamLink(
                            adopting: socket.fileDescriptor, sendUnit: unit, framed: options.format == .msgpipe)
                        options.note(.detail, "\(peer): data over the L2CAP channel, SDU \(unit)")
                        await handle(link, peer)
                        await link.close()
                    } catch {
                        options.note(.warning, "channel from \(peer): \(error)")
                    }
                }
            }
        }
    }

    /// The peripheral beside bluetoothd: registers the application and advertisement, one child task per
    /// central (at most `maximumConcurrent`; bluetoothd keeps further ones connected until there is room).
    private func acceptAcquiredLinks(
        bus: DBusConnection, info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int,
        unnumbered: Bool, onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        defer { bus.close() }
        let options = options
        let version = await BlueZVersion.running(bus: bus)
        if let note = BluetoothdConfiguration.eattNote(
            version: version, unnumbered: unnumbered, eattOff: BluetoothdConfiguration.turnsEATTOff()) {
            options.note(.advice, note)
        }
        let oneAtATime = version.map { $0 < .perCentralSockets } ?? true
        if oneAtATime, centralsAtOnce > 1 {
            throw BlueZError.severalCentralsUnsupported(version: version, centrals: centralsAtOnce)
        }
        // bluetoothd before 5.69 drops written values over 510 bytes: say 513 as the server's ATT_MTU so
        // msgpipe centrals write at most 510 (PROTOCOL.md 5.2).
        var info = info
        info.serverMTU = min(info.serverMTU, BlueZPeripheral.largestWholeWriteMTU)
        let adapter = try await BlueZAdapter.path(for: try AdapterSelector(options.adapter), bus: bus)
        guard case let .bluetooth(localName) = address else { return }
        let peripheral = try await BlueZPeripheral.start(
            bus: bus, adapter: adapter, profile: options.profile, info: info, localName: localName,
            backlog: max(8, maximumConcurrent), security: options.security, oneCentralAtATime: oneAtATime
        ) { event in
            switch event {
            case let .bluetoothdLeft(links):
                options.note(.warning, "bluetoothd left the bus: \(links) connection(s) ended; waiting for it to come back")
            case .registeredAgain:
                options.note(.warning, "bluetoothd restarted: registered again")
            case let .registrationFailed(reason):
                options.note(.warning, "bluetoothd restarted, registering again failed: \(reason)")
            case let .advertising(on):
                options.note(.detail, on ? "advertising again: the central's turn ended"
                                          : "a central connected: not advertising during its turn")
            case let .advertisingFailed(reason):
                options.note(.warning, reason)
            case let .subscriptionLost(peer):
                // Also every msgpipe central's goodbye (it unsubscribes, then disconnects): a detail.
                options.note(.detail, """
                    bluetoothd closed the notification socket of \(peer), which is still connected (it \
                    unsubscribed, or bluetoothd lost its subscription when another central left: BlueZ issue \
                    #1452); what is sent to it waits until it subscribes again
                    """)
            }
        }
        defer { peripheral.stop() }
        onStop { peripheral.stop() }
        let versionText = version.map { "bluetoothd \($0)" } ?? "bluetoothd of unknown version"
        onReady("advertising '\(localName)' on \(BlueZAdapter.name(path: adapter)) (through bluetoothd)"
            + (oneAtATime ? "; one central at a time (\(versionText) shares one socket among centrals; 5.76 does not)" : ""))
        let slots = CreditPool(capacity: max(1, maximumConcurrent))
        try await withThrowingTaskGroup(of: Void.self) { group in
            var accepted = 0
            for await connection in peripheral.connections {
                try await slots.acquire()
                accepted += 1
                group.addTask {
                    defer { slots.release() }
                    await handle(connection.link, connection.peer)
                    await connection.link.close()
                }
                if let connections, accepted >= connections { break }
            }
            try await group.waitForAll()
        }
    }

    /// The accept loop on msgpipe's own GATT server: each central's ATT bearer (UNIX socket or the kernel's
    /// ATT channel) to `handle`.
    private func acceptBearers(
        connections: Int?, maximumConcurrent: Int, onReady: (String) -> Void,
        handle: @escaping @Sendable (ATTBearer, String) async -> Void
    ) async throws {
        switch address {
        case let .unix(path):
            let listener = try SeqPacketListener(path: path)
            defer { listener.close() }
            onStop { listener.close() }
            onReady("listening on unix:\(path)")
            let slots = CreditPool(capacity: max(1, maximumConcurrent))
            try await withThrowingTaskGroup(of: Void.self) { group in
                var served = 0
                while connections.map({ served < $0 }) ?? true {
                    try await slots.acquire()
                    let bearer: ATTBearer?
                    do {
                        bearer = try await listener.accept()
                    } catch {
                        slots.release()
                        throw error
                    }
                    guard let bearer else {
                        slots.release()
                        break
                    }
                    served += 1
                    let peer = maximumConcurrent > 1 ? "unix:\(path)#\(served)" : "unix:\(path)"
                    group.addTask {
                        defer { slots.release() }
                        await handle(bearer, peer)
                    }
                }
                try await group.waitForAll()
            }
        case let .bluetooth(localName):
            try await acceptKernelConnections(
                localName: localName, maximumConcurrent: max(1, maximumConcurrent), connections: connections,
                onReady: onReady
            ) { socket in
                let peer = "\(socket.peer)"
                do {
                    await handle(try ATTBearer(adopting: socket.fileDescriptor), peer)
                } catch {
                    self.options.note(.warning, "connection from \(peer): \(error)")
                }
            }
        }
    }

    /// Advertises `localName` with the profile's service while fewer than `maximumConcurrent` centrals are
    /// linked (stops at the maximum, resumes when one leaves) and runs `serve` for each central in a child
    /// task, with the connected ATT socket (which `serve` owns and must close).
    private func acceptKernelConnections(
        localName: String, maximumConcurrent: Int, connections: Int?, onReady: (String) -> Void,
        serve: @escaping @Sendable (ConnectedATTSocket) async -> Void
    ) async throws {
        let options = options
        let peripheral = try await BlockingCall.run { () throws(BluetoothError) in
            try BLEPeripheral(
                adapter: try AdapterSelector(options.adapter),
                advertisement: Advertisement(
                    localName: localName, service: AdvertisedServiceUUID(options.profile.service.description)),
                security: options.security,
                pairing: BLEPeripheral.Pairing(bondDirectory: options.bondDirectory) { note in
                    options.note(note.kind == .warning ? .warning : .detail, note.description)
                })
        }
        // The peripheral's own lock is held while it waits for a central: stop through a socket of our own.
        let (adapter, advertisement) = (peripheral.adapter, peripheral.advertisement)
        onStop {
            if let management = try? ManagementSocket() {
                try? Advertiser.stop(advertisement, on: adapter, using: management)
            }
        }
        onReady("advertising '\(advertisement.localName)' on \(adapter)")
        defer { peripheral.stop() }
        try await withThrowingDiscardingTaskGroup { group in
            var accepted = 0
            // Never more linked at once than there are connections left to accept: at the maximum the
            // advertising instance is removed, so no central can land where nobody will accept it.
            let maximum = min(maximumConcurrent, connections ?? .max)
            for try await socket in peripheral.connections(maximumConcurrent: maximum) {
                accepted += 1
                group.addTask { await serve(socket) }
                if let connections, accepted >= connections {
                    peripheral.stop()  // the last one: no advertising while they are served
                    break
                }
            }
        }
    }
}

extension PipeAcceptor: LinkAcceptor {
    /// True on a UNIX socket, whose accept ends on cancellation; a kernel accept blocks on a thread of its own.
    public var endsOnCancellation: Bool {
        if case .unix = address { true } else { false }
    }
}
