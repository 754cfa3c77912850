public import Backpressure
public import BluetoothCore
public import SDBus
import Synchronization

/// LE discovery through bluetoothd: `Adapter1.SetDiscoveryFilter({Transport: "le", UUIDs, DuplicateData})`
/// and `StartDiscovery`, devices from `GetManagedObjects`, `InterfacesAdded` and `PropertiesChanged`. It
/// coexists with other clients' discovery sessions: bluetoothd merges their filters, so every device is
/// checked against our own ``filter`` again. `StopDiscovery` at ``stop()`` (bluetoothd also ends the session
/// when this D-Bus connection closes). One discovery per D-Bus connection at a time (bluetoothd's rule).
public final class BlueZDiscovery: Sendable {
    /// Each matching peer once, when it is first heard advertising (a reported RSSI): the kernel
    /// backend's scanner (BLELink's `Scanner`) reports the same type. Bounded by the peer limit given to ``start(bus:adapter:filter:peerLimit:)``;
    /// finishes at ``stop()``, or throws ``BlueZError/notRunning`` if bluetoothd leaves the bus.
    public let reports: BoundedAsyncQueue<DiscoveredPeer, BlueZError>
    public let filter: ScanFilter
    /// The adapter's object path.
    public let adapter: String
    private let bus: DBusConnection
    private let peerLimit: Int
    private let state = Mutex(State())

    private struct State {
        /// Every device seen, by Device1 path (at most peerLimit).
        var peers: [String: DiscoveredPeer] = [:]
        /// Paths reported through `reports` (at most peerLimit, so a push never finds the queue full).
        var reported: Set<String> = []
        var registrations: [DBusRegistration] = []
        var stopped = false
    }

    private init(bus: DBusConnection, adapter: String, filter: ScanFilter, peerLimit: Int) {
        self.bus = bus
        self.adapter = adapter
        self.filter = filter
        self.peerLimit = max(1, peerLimit)
        reports = BoundedAsyncQueue(capacity: max(1, peerLimit))
    }

    deinit {
        let running = state.withLock { state in
            defer { state.stopped = true }
            for registration in state.registrations { registration.cancel() }
            return !state.stopped
        }
        if running {
            Task { [bus, adapter] in
                _ = try? await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
                                        member: "StopDiscovery")
            }
        }
    }

    /// Starts discovering on `adapter` ("hci0" or its object path) for peers matching `filter`, remembering
    /// at most `peerLimit` devices.
    public static func start(
        bus: DBusConnection, adapter: String = "hci0", filter: ScanFilter = ScanFilter(), peerLimit: Int = 4096
    ) async throws(BlueZError) -> BlueZDiscovery {
        let adapterPath = BlueZAdapter.path(adapter)
        _ = try await BlueZAdapter.requirePowered(bus: bus, adapter: adapterPath)
        let discovery = BlueZDiscovery(bus: bus, adapter: adapterPath, filter: filter, peerLimit: peerLimit)
        do throws(DBusError) {
            var registrations = [try await bus.addMatch(.interfacesAdded(sender: "org.bluez")) { [weak discovery] signal in
                guard signal.arguments.count == 2, let path = signal.arguments[0].stringValue,
                      let properties = signal.arguments[1].stringKeyed?["org.bluez.Device1"]?.stringKeyed else { return }
                discovery?.apply(path: path, properties: properties)
            }]
            registrations.append(try await bus.addMatch(
                .propertiesChanged(sender: "org.bluez", pathNamespace: adapterPath, interface: "org.bluez.Device1")
            ) { [weak discovery] signal in
                guard signal.arguments.count >= 2, let changed = signal.arguments[1].stringKeyed else { return }
                discovery?.apply(path: signal.path, properties: changed)
            })
            registrations.append(try await bus.addMatch(.nameOwnerChanged("org.bluez")) { [weak discovery] signal in
                guard signal.arguments.count == 3, signal.arguments[2].stringValue == "" else { return }
                discovery?.reports.finish(throwing: .notRunning)
            })
            discovery.state.withLock { $0.registrations = registrations }
        } catch {
            throw BlueZError(error, calling: "watching bluetoothd's devices")
        }
        let objects: [String: [String: [String: DBusValue]]]
        do throws(DBusError) {
            objects = try await bus.managedObjects(destination: "org.bluez", path: "/")
        } catch {
            throw BlueZError(error, calling: "GetManagedObjects")
        }
        for (path, interfaces) in objects {
            if let device = interfaces["org.bluez.Device1"] { discovery.apply(path: path, properties: device) }
        }
        var options: [(String, DBusValue)] = [("Transport", .string("le"))]
        if let service = filter.service { options.append(("UUIDs", .strings([service.bluezString]))) }
        options.append(("DuplicateData", .boolean(true)))
        try await discovery.adapterCall("SetDiscoveryFilter", [.variantDictionary(options)])
        try await discovery.adapterCall("StartDiscovery")
        return discovery
    }

    /// Discovers for `duration`, calling `onMatch` the first time each matching peer is heard; returns the
    /// matching peers, strongest first (the D-Bus counterpart of BLELink's `Scanner.scan`).
    public static func scan(
        bus: DBusConnection, adapter: String = "hci0", duration: Duration, filter: ScanFilter = ScanFilter(),
        stopAtFirstMatch: Bool = false, onMatch: (DiscoveredPeer) -> Void = { _ in }
    ) async throws(BlueZError) -> [DiscoveredPeer] {
        let discovery = try await start(bus: bus, adapter: adapter, filter: filter)
        let timer = Task {
            try? await Task.sleep(for: duration)
            discovery.reports.finish()  // ends the loop below, which stops the discovery
        }
        defer { timer.cancel() }
        do throws(BlueZError) {
            for try await peer in discovery.reports {
                onMatch(peer)
                if stopAtFirstMatch { break }
            }
        } catch {
            await discovery.stop()
            throw error
        }
        await discovery.stop()
        return discovery.matches
    }

    /// The latest state (RSSI, data) of every peer reported so far, strongest first.
    public var matches: [DiscoveredPeer] {
        state.withLock { state in state.reported.compactMap { state.peers[$0] } }
            .sorted { ($0.rssi, $1.peer.address) > ($1.rssi, $0.peer.address) }
    }

    /// The latest state of the device at `path` (a Device1 object path), if it was seen.
    public func peer(at path: String) -> DiscoveredPeer? { state.withLock { $0.peers[path] } }

    /// Stops discovering (`StopDiscovery`) and finishes ``reports``. Idempotent.
    public func stop() async {
        let registrations = state.withLock { state -> [DBusRegistration]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            defer { state.registrations = [] }
            return state.registrations
        }
        guard let registrations else { return }
        for registration in registrations { registration.cancel() }
        reports.finish()
        _ = try? await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
                                member: "StopDiscovery")
    }

    /// Merges a device's properties; reports it the first time it matches and was heard.
    private func apply(path: String, properties: [String: DBusValue]) {
        let prefix = adapter + "/dev_"
        guard path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/") else { return }
        let report = state.withLock { state -> DiscoveredPeer? in
            guard !state.stopped else { return nil }
            guard var peer = state.peers[path] ?? DiscoveredPeer(bluezDevice: path) else { return nil }
            peer.merge(bluezDevice: properties)
            guard state.peers[path] != nil || state.peers.count < peerLimit else { return nil }
            state.peers[path] = peer
            guard peer.wasHeard, filter.matches(peer), !state.reported.contains(path),
                  state.reported.count < peerLimit else { return nil }
            state.reported.insert(path)
            return peer
        }
        if let report { _ = try? reports.tryPush(report) }
    }

    private func adapterCall(_ member: String, _ arguments: [DBusValue] = []) async throws(BlueZError) {
        do throws(DBusError) {
            _ = try await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1",
                                   member: member, arguments: arguments)
        } catch {
            await stop()
            switch error.name {
            case "org.bluez.Error.NotReady": throw .adapterPoweredOff(BlueZAdapter.name(path: adapter))
            case "org.bluez.Error.InProgress": throw .inProgress("\(member) on \(BlueZAdapter.name(path: adapter))")
            default: throw BlueZError(error, calling: "Adapter1.\(member)")
            }
        }
    }
}

extension AdvertisedServiceUUID {
    /// The 128-bit lowercase form bluetoothd parses in filters and reports in `UUIDs`.
    var bluezString: String {
        var text = fullBytes.reversed().map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        for position in [20, 16, 12, 8] { text.insert("-", at: text.index(text.startIndex, offsetBy: position)) }
        return text
    }
}
