import GATT
import ArgumentParser
import Backpressure
import BLELink
import Glibc
import Transport

/// Where the GATT link of `listen`, `send`, `request` and `serve` goes: a UNIX SEQPACKET socket
/// (`--link unix:PATH`, the same ATT/GATT code without a radio) or a Bluetooth controller (`--adapter`,
/// `--to`, ...), and which GATT service it speaks (`--profile`).
struct LinkOptions: ParsableArguments {
    @Option(help: "unix:PATH: GATT over a UNIX SEQPACKET socket at PATH instead of Bluetooth.")
    var link: String?

    @Option(help: """
        The GATT service: msgpipe, nus (Nordic UART Service), or custom:SERVICE:WRITE:NOTIFY (16- or 128-bit \
        UUIDs: the service, the characteristic the central writes, the one the peripheral notifies).
        """)
    var profile: String = "msgpipe"

    @OptionGroup var bluetooth: AdapterOptions

    /// The two kinds of link.
    enum Endpoint: Equatable {
        case unix(path: String)
        case bluetooth
    }

    func validate() throws {
        _ = try endpoint()
        _ = try gattProfile()
    }

    func endpoint() throws(ValidationError) -> Endpoint {
        guard let link else { return .bluetooth }
        guard link.hasPrefix("unix:"), link.count > 5 else {
            throw ValidationError("--link must be unix:PATH, not '\(link)' (for Bluetooth use --adapter/--to)")
        }
        if bluetooth.usesBluetooth {
            throw ValidationError("--link unix:PATH and --adapter/--to exclude each other")
        }
        return .unix(path: String(link.dropFirst(5)))
    }

    func gattProfile() throws(ValidationError) -> GATTServiceProfile {
        do throws(GATTProfileError) {
            return try GATTServiceProfile.parse(profile)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// A short description of the link for diagnostics: "unix:PATH" or "hci0".
    var displayName: String { link ?? bluetooth.adapter ?? "the default adapter" }

    // MARK: Peripheral (listen, serve, send --name)

    /// The accept loop of every peripheral role: listens on the socket, or advertises the profile's service
    /// (through bluetoothd with `--backend bluez`), and hands each central's link and description to
    /// `handle`, up to `maximumConcurrent` centrals at once (the next one is accepted when one of them
    /// leaves), until `connections` were accepted (nil: until cancelled); returns once the last `handle`
    /// returned. The link is connected when `handle` starts and closed after it returned; on msgpipe's own
    /// GATT it is served (with `info`) while `handle` runs. With `shutdown`, a signal removes the socket file
    /// or stops advertising. `onBearer` sees each central's ATT bearer on msgpipe's own GATT (bench reads the
    /// PHY from it); through bluetoothd there is none. `unnumbered`: the packets carry a plain format, which
    /// cannot put values back in order (a bluetoothd with EATT on by default gets a warning).
    func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int = 1, centralsAtOnce: Int = 1,
        shutdown: ShutdownSignal?, verbose: Bool = false, unnumbered: Bool = false, onReady: (String) -> Void,
        onBearer: @escaping @Sendable (ATTBearer, String) -> Void = { _, _ in },
        handle: @escaping @Sendable (PeerLink, String) async -> Void
    ) async throws {
        let profile = try gattProfile()
        if try endpoint() == .bluetooth, case let .bluez(bus) = try await bluetooth.resolveBackend(verbose: verbose) {
            return try await acceptAcquiredLinks(
                bus: bus, profile: profile, info: info, connections: connections, maximumConcurrent: maximumConcurrent,
                centralsAtOnce: centralsAtOnce, shutdown: shutdown, verbose: verbose, unnumbered: unnumbered,
                onReady: onReady, handle: handle)
        }
        try await acceptBearers(
            profile: profile, connections: connections, maximumConcurrent: maximumConcurrent, shutdown: shutdown,
            onReady: onReady
        ) { bearer, peer in
            onBearer(bearer, peer)
            let gattLink = GATTLink(profile: profile)
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await handle(.gatt(gattLink), peer) }
                await gattLink.serve(bearer, info: info)
                await gattLink.close()
            }
        }
    }

    /// The peripheral beside bluetoothd: registers the application and advertisement, one child task per
    /// central (at most `maximumConcurrent`; bluetoothd keeps further ones connected until there is room).
    /// A bluetoothd before 5.76 (or of unknown version) is served one central at a time (``BlueZPeripheral``):
    /// `centralsAtOnce` above 1 (send --name --centrals N) fails at once with the remedy.
    private func acceptAcquiredLinks(
        bus: DBusConnection, profile: GATTServiceProfile, info: MsgPipeServiceInfo, connections: Int?,
        maximumConcurrent: Int, centralsAtOnce: Int, shutdown: ShutdownSignal?, verbose: Bool, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (PeerLink, String) async -> Void
    ) async throws {
        defer { bus.close() }
        let version = await BlueZVersion.running(bus: bus)
        if let note = BluetoothdConfiguration.eattNote(
            version: version, unnumbered: unnumbered, eattOff: BluetoothdConfiguration.turnsEATTOff()) {
            printError(note)
        }
        let oneAtATime = version.map { $0 < .perCentralSockets } ?? true
        if oneAtATime, centralsAtOnce > 1 {
            throw BlueZError.severalCentralsUnsupported(version: version, centrals: centralsAtOnce)
        }
        // bluetoothd before 5.69 drops written values over 510 bytes (docs/LAB.md): say 513 as the server's
        // ATT_MTU so msgpipe centrals write at most 510 (PROTOCOL.md 5.2).
        var info = info
        info.serverMTU = min(info.serverMTU, BlueZPeripheral.largestWholeWriteMTU)
        let adapter = try await BlueZAdapter.path(for: try bluetooth.selector(), bus: bus)
        let peripheral = try await BlueZPeripheral.start(
            bus: bus, adapter: adapter, profile: profile, info: info, localName: bluetooth.localName,
            backlog: max(8, maximumConcurrent), security: try bluetooth.securityLevel(), oneCentralAtATime: oneAtATime
        ) { event in
            switch event {
            case let .bluetoothdLeft(links):
                printError("bluetoothd left the bus: \(links) connection(s) ended; waiting for it to come back")
            case .registeredAgain:
                printError("bluetoothd restarted: registered again")
            case let .registrationFailed(reason):
                printError("bluetoothd restarted, registering again failed: \(reason)")
            case let .advertising(on):
                if verbose {
                    BluetoothDiagnostics.print(on ? "advertising again: the central's turn ended"
                                                  : "a central connected: not advertising during its turn")
                }
            case let .advertisingFailed(reason):
                printError(reason)
            case let .subscriptionLost(peer):
                // Also every msgpipe central's goodbye (it unsubscribes, then disconnects): verbose only.
                if verbose {
                    BluetoothDiagnostics.print("""
                        bluetoothd closed the notification socket of \(peer), which is still connected (it \
                        unsubscribed, or bluetoothd lost its subscription when another central left: BlueZ issue \
                        #1452); what is sent to it waits until it subscribes again
                        """)
                }
            }
        }
        defer { peripheral.stop() }
        shutdown?.onSignal { peripheral.stop() }
        let versionText = version.map { "bluetoothd \($0)" } ?? "bluetoothd of unknown version"
        onReady("advertising '\(bluetooth.localName)' on \(BlueZAdapter.name(path: adapter)) (through bluetoothd)"
            + (oneAtATime ? "; one central at a time (\(versionText) shares one socket among centrals; 5.76 does not)" : ""))
        let slots = CreditPool(capacity: max(1, maximumConcurrent))
        try await withThrowingTaskGroup(of: Void.self) { group in
            var accepted = 0
            for await connection in peripheral.connections {
                try await slots.acquire()
                accepted += 1
                group.addTask {
                    defer { slots.release() }
                    await handle(.acquired(connection.link), connection.peer)
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
        profile: GATTServiceProfile, connections: Int?, maximumConcurrent: Int, shutdown: ShutdownSignal?,
        onReady: (String) -> Void, handle: @escaping @Sendable (ATTBearer, String) async -> Void
    ) async throws {
        switch try endpoint() {
        case let .unix(path):
            try UnixSocketPath.checkAvailable(path)
            let listener = try SeqPacketSocket.listen(path: path)
            defer {
                _ = Glibc.close(listener)
                unlink(path)
            }
            shutdown?.onSignal { unlink(path) }
            onReady("listening on unix:\(path)")
            let slots = CreditPool(capacity: max(1, maximumConcurrent))
            try await withThrowingTaskGroup(of: Void.self) { group in
                var served = 0
                while connections.map({ served < $0 }) ?? true {
                    try await slots.acquire()
                    let fd: Int32
                    do {
                        fd = try await SeqPacketSocket.accept(listener)
                    } catch {
                        slots.release()
                        throw error
                    }
                    if UnixSocketPath.isProbe(fd) {  // another listener checking whether this one is alive
                        _ = Glibc.close(fd)
                        slots.release()
                        continue
                    }
                    served += 1
                    let bearer = try ATTBearer(adopting: fd)
                    let peer = maximumConcurrent > 1 ? "unix:\(path)#\(served)" : "unix:\(path)"
                    group.addTask {
                        defer { slots.release() }
                        await handle(bearer, peer)
                    }
                }
                try await group.waitForAll()
            }
        case .bluetooth:
            try await bluetooth.acceptConcurrentConnections(
                service: AdvertisedServiceUUID(profile.service.description),
                maximumConcurrent: max(1, maximumConcurrent), connections: connections,
                onAdvertising: { peripheral in
                    // The peripheral's own lock is held while it waits for a central: stop through a socket of our own.
                    let (adapter, advertisement) = (peripheral.adapter, peripheral.advertisement)
                    shutdown?.onSignal {
                        if let management = try? ManagementSocket() {
                            try? Advertiser.stop(advertisement, on: adapter, using: management)
                        }
                    }
                    onReady("advertising '\(advertisement.localName)' on \(adapter)")
                }
            ) { socket in
                let peer = "\(socket.peer)"
                do {
                    await handle(try ATTBearer(adopting: socket.fileDescriptor), peer)
                } catch {
                    printError("connection from \(peer): \(error)")
                }
            }
        }
    }

    // MARK: Central (send, request)

    /// The central role: connects `link` to the peripheral (the socket at PATH, or `--to` over Bluetooth),
    /// exchanges the MTU, discovers the profile and subscribes; returns the peer's description.
    /// `onBearer` sees the ATT bearer before the GATT link starts on it (bench asks it for the PHY).
    @discardableResult
    func connect(
        _ link: GATTLink, onRetry: @escaping @Sendable (String) -> Void = { _ in },
        onBearer: (ATTBearer) -> Void = { _ in }
    ) async throws -> String {
        switch try endpoint() {
        case let .unix(path):
            let bearer = try ATTBearer(adopting: try SeqPacketSocket.connect(path: path))
            onBearer(bearer)
            try await link.connect(bearer)
            return "unix:\(path)"
        case .bluetooth:
            let profile = link.profile
            let socket = try await bluetooth.connectedSocket(
                service: AdvertisedServiceUUID(profile.service.description),
                onRetry: { error, delay in onRetry("\(error); retrying in \(delay) s") })
            let bearer = try ATTBearer(adopting: socket.fileDescriptor)
            onBearer(bearer)
            try await link.connect(bearer)
            return "\(socket.peer)"
        }
    }

    /// A new central link for the chosen backend (not yet connected): msgpipe's own GATT client, or the
    /// relay of connections through bluetoothd (`--backend bluez`).
    /// `confirmedWrites` (plain formats): through bluetoothd every packet is a Write Request (see
    /// ``BlueZCentralLink``); msgpipe's own GATT confirms the last one itself. `receivesUnnumbered`: a
    /// plain-format receiver (`listen --to`), told that bluetoothd's EATT may reorder what it receives.
    func makeCentralLink(verbose: Bool = false, confirmedWrites: Bool = false, receivesUnnumbered: Bool = false)
        async throws -> PeerLink {
        let profile = try gattProfile()
        if try endpoint() == .bluetooth, case let .bluez(bus) = try await bluetooth.resolveBackend(verbose: verbose) {
            do {
                let adapter = try await BlueZAdapter.path(for: try bluetooth.selector(), bus: bus)
                // Confirmed writes (a plain-format send) go one at a time: EATT neither slows nor reorders them.
                // A plain-format receiver (listen --to) gets the ordering note, everything else the speed note.
                if !confirmedWrites, let note = BluetoothdConfiguration.eattNote(
                    version: await BlueZVersion.running(bus: bus), unnumbered: receivesUnnumbered,
                    eattOff: BluetoothdConfiguration.turnsEATTOff()) {
                    printError(note)
                }
                return .bluezCentral(BlueZCentralLink(bus: bus, adapter: adapter, confirmedWrites: confirmedWrites))
            } catch {
                bus.close()
                throw error
            }
        }
        return .gatt(GATTLink(profile: profile))
    }

    /// Connects (or reconnects) `peerLink`'s central side as ``connect(_:onRetry:)`` does, through bluetoothd
    /// for a link made by ``makeCentralLink(verbose:)`` with `--backend bluez`.
    @discardableResult
    func connect(
        _ peerLink: PeerLink, onRetry: @escaping @Sendable (String) -> Void = { _ in },
        onBearer: (ATTBearer) -> Void = { _ in }
    ) async throws -> String {
        switch peerLink {
        case let .gatt(gattLink):
            return try await connect(gattLink, onRetry: onRetry, onBearer: onBearer)
        case let .bluezCentral(central):
            guard let to = bluetooth.to else { throw BluetoothError.invalidArgument("a central needs --to ADDRESS or --to NAME") }
            return try await central.connect(CentralTarget(to), profile: try gattProfile(), timeout: bluetooth.connectTimeout)
        case .acquired:
            throw LinkError.io("a link acquired from bluetoothd carries one connection and cannot reconnect")
        }
    }
}
