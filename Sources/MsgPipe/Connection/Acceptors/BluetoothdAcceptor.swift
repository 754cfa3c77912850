import BLELink
import BlueZLink
import SDBus
import Synchronization
public import GATT
import Transport

/// The bluetoothd backend's peripheral (``BluetoothdStack``'s acceptor): registers msgpipe's GATT application
/// and advertisement through bluetoothd's D-Bus API and serves each central through the sockets bluetoothd
/// hands over (`AcquiredLink`), beside an LE credit-based channel unless the link mode is gatt.
///
/// ```swift
/// let acceptor = BluetoothdAcceptor(name: "kiosk", options: options)
/// try await acceptor.acceptLinks(
///     info: options.serviceInfo(), connections: nil, maximumConcurrent: 1, centralsAtOnce: 1, unnumbered: false,
///     onReady: { print($0) }) { link, peer in await TransportListener().accept(link, peer: peer) }
/// ```
public final class BluetoothdAcceptor: LinkAcceptor {
    private let loop: AcceptLoop
    /// The local name advertised.
    public let name: String
    /// The bus bluetoothd was found on, owned by this acceptor (nil: the accept loop opens its own).
    private let bus: DBusConnection?
    /// The registered peripheral while the accept loop runs: ``close()`` unregisters its advertisement.
    private let running = Mutex<BlueZPeripheral?>(nil)

    /// The advice note of a peripheral through bluetoothd, which cannot widen the adapter's interval range.
    package static let intervalAdvice = "through bluetoothd this peripheral's kernel asks each central whose "
        + "connection interval lies outside the adapter's default range (30-50 ms unless [LE] MinConnectionInterval/"
        + "MaxConnectionInterval in /etc/bluetooth/main.conf say otherwise) to move into it; the kernel backend "
        + "with CAP_NET_ADMIN keeps the central's interval"

    /// Advertises `name` with `options` (their backend set to bluez, which carries no kernel options); the
    /// accept loop connects to bluetoothd on `MessagePipe.Options.bluetoothdBus`.
    public convenience init(name: String, options: MessagePipe.Options) {
        self.init(name: name, options: options, bus: nil)
    }

    /// As ``init(name:options:)``, on `bus` (which it owns and closes once the accept loop ends).
    init(name: String, options: MessagePipe.Options, bus: DBusConnection?) {
        (self.name, self.bus) = (name, bus)
        self.loop = AcceptLoop(address: .bluetooth(name), options: options, backend: .bluez)
    }

    /// `LinkAcceptor/acceptLinks(info:connections:maximumConcurrent:centralsAtOnce:unnumbered:onReady:handle:)`
    /// through bluetoothd. `centralsAtOnce` above 1 throws `BlueZError.severalCentralsUnsupported(version:centrals:)`
    /// before bluetoothd 5.76, which serves one central at a time; `unnumbered` asks for the EATT advice where
    /// bluetoothd may reorder values. Throws `BlueZError` when bluetoothd cannot be reached or refuses.
    public func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        let bus = try await openedBus()
        defer { bus.close() }
        options.note(.detail, ResolvedBackend.bluez(bus).summary)
        options.note(.advice, Self.intervalAdvice)
        let (options, channelOnly) = (options, options.linkMode == .l2cap)
        try await loop.besideChannels(info: info, maximumConcurrent: maximumConcurrent, handle: handle) { served in
            try await acceptAcquiredLinks(
                bus: bus, info: served, connections: connections, maximumConcurrent: maximumConcurrent,
                centralsAtOnce: centralsAtOnce, unnumbered: unnumbered, onReady: onReady
            ) { link, peer in
                guard channelOnly else { return await handle(link, peer) }
                options.note(.warning, "\(peer) asked for data over GATT; serving the L2CAP channel only")
                await link.disconnect()
            }
        }
    }

    /// The bus given at init, or one of its own where bluetoothd runs (throws `BlueZError` otherwise).
    private func openedBus() async throws(BlueZError) -> DBusConnection {
        if let bus { return bus }
        guard case let .bluez(bus) = try await ResolvedBackend.resolve(.bluez, busAddress: options.bluetoothdBus) else {
            throw .notRunning
        }
        return bus
    }

    /// Registers the application and advertisement, one child task per central (at most `maximumConcurrent`;
    /// bluetoothd keeps further ones connected until there is room).
    private func acceptAcquiredLinks(
        bus: DBusConnection, info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int,
        unnumbered: Bool, onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        let (options, localName) = (options, name)
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
        running.withLock { $0 = peripheral }
        defer {
            running.withLock { $0 = nil }
            peripheral.stop()
        }
        loop.onStop { peripheral.stop() }
        let versionText = version.map { "bluetoothd \($0)" } ?? "bluetoothd of unknown version"
        onReady("advertising '\(localName)' on \(BlueZAdapter.name(path: adapter)) (through bluetoothd)"
            + (oneAtATime ? "; one central at a time (\(versionText) shares one socket among centrals; 5.76 does not)" : ""))
        try await AcceptLoop.acceptEach(connections: connections, maximumConcurrent: maximumConcurrent) {
            await peripheral.connections.next()
        } handle: { connection, _ in
            await handle(connection.link, connection.peer)
            await connection.link.close()
        }
        // The last central's turn may have just registered the advertisement again: it goes before we leave.
        await peripheral.close()
    }

    public var options: MessagePipe.Options { loop.options }
    /// False: bluetoothd's connections arrive on a queue a cancelled task does not end.
    public var endsOnCancellation: Bool { false }
    /// Unregisters the advertisement and application and stops the channel listener at once, from any thread.
    /// The accept loop itself ends when its task is cancelled.
    public func stop() { loop.stop() }

    /// Unregisters the advertisement (a re-registration in flight completes first; at most 2 s), then
    /// ``stop()``: bluetoothd 5.66 keeps an empty advertising instance on the adapter when the advertisement's
    /// object goes while it reads it.
    public func close() async {
        await running.withLock({ $0 })?.close()
        loop.stop()
    }
}
