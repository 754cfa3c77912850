import Backpressure
public import BluetoothCore
public import GATT
import Glibc
public import SDBus
public import Transport

/// The central role beside bluetoothd: finds the peer (discovery, or the Device1 path of a known address),
/// `Device1.Connect` with retries on a busy radio, waits for `ServicesResolved`, then acquires the profile's
/// write and notify characteristics (`AcquireWrite` / `AcquireNotify`) into an ``AcquiredLink``, or falls
/// back to ``BlueZValueLink`` (`WriteValue` + `StartNotify`) for a peer whose characteristics do not allow it.
public enum BlueZCentral {
    /// One connected peripheral.
    public final class Connection: Sendable {
        /// The packet link for Transport: an ``AcquiredLink`` or, as the fallback, a ``BlueZValueLink``.
        /// It reports `.disconnected` when bluetoothd says Device1.Connected false.
        public let link: any Link
        public let peer: BluetoothPeer
        /// The Device1 object path.
        public let device: String
        /// The ATT MTU bluetoothd reported (23 when it could not tell, on the fallback before BlueZ 5.62).
        public let mtu: Int
        /// True for acquired descriptors, false for the WriteValue/StartNotify fallback.
        public let usesAcquiredDescriptors: Bool
        /// False when another client had connected the device already: ``disconnect()`` then leaves it up.
        public let madeTheConnection: Bool
        /// The PSM of the LE credit-based channel the peer's service publishes (its characteristic
        /// ``GATTServiceProfile/channelPSM``, read at connect), nil when it publishes none or the read failed.
        public let channelPSM: UInt16?
        /// The adapter's address as bluetoothd reports it (nil if it did not): the local end of a channel.
        public let adapterAddress: BluetoothAddress?
        private let bus: DBusConnection
        private let watch: BlueZDeviceWatch

        init(link: any Link, peer: BluetoothPeer, device: String, mtu: Int, acquired: Bool, madeTheConnection: Bool,
             channelPSM: UInt16?, adapterAddress: BluetoothAddress?, bus: DBusConnection, watch: BlueZDeviceWatch) {
            self.madeTheConnection = madeTheConnection
            self.channelPSM = channelPSM
            self.adapterAddress = adapterAddress
            self.link = link
            self.peer = peer
            self.device = device
            self.mtu = mtu
            usesAcquiredDescriptors = acquired
            self.bus = bus
            self.watch = watch
        }

        /// Closes the link and, if this central made the connection, asks bluetoothd to end it
        /// (`Device1.Disconnect`).
        public func disconnect() async {
            watch.cancel()
            await link.close()
            guard madeTheConnection else { return }
            _ = try? await bus.call(destination: "org.bluez", path: device, interface: "org.bluez.Device1",
                                    member: "Disconnect")
        }
    }

    /// The largest packet the central writes for an ATT `mtu`: ATT_MTU - 3. bluetoothd turns each datagram of
    /// the write descriptor (or each WriteValue) into one Write Command / Request: 3 bytes of opcode and handle,
    /// and a value over ATT_MTU - 3 is not sent at all (src/gatt-client.c `sock_read` ignores the failure).
    /// The 5 bytes ``AcquiredLink/maximumPacketSize(mtu:)`` leaves are for notifications only, which bluetoothd
    /// may pack into Multiple Handle Value Notifications; writes never are.
    /// At most 510 bytes, whatever the MTU: a peripheral served by bluetoothd before 5.69 (Debian 12, Raspberry
    /// Pi OS) drops written values over 510 silently (``BlueZPeripheral/largestWholeWriteMTU``).
    public static func maximumWriteSize(mtu: Int) -> Int {
        min(Int(BlueZPeripheral.largestWholeWriteMTU) - 3, max(23, min(mtu, ATTOpcode.maximumMTU)) - 3)
    }

    /// Connects `target` (an address, known to bluetoothd or discovered, or an advertised name) through
    /// `adapter` ("hci0" or its path) and opens `profile`'s characteristics. `timeout` bounds the whole setup
    /// (discovery, connect attempts, service resolution); `backoff` the Connect retries on
    /// `le-connection-abort-by-local` and InProgress. With `confirmedWrites` every packet goes as a Write
    /// Request (`WriteValue` type "request", awaited): slow, but a send that returned was taken by the peer's
    /// ATT layer (plain formats have no acknowledgement of their own; see ``BlueZValueLink``).
    public static func connect(
        bus: DBusConnection, adapter: String = "hci0", target: CentralTarget, profile: GATTServiceProfile,
        timeout: Duration = .seconds(30), backoff: ReconnectBackoff = ReconnectBackoff(initial: .milliseconds(500), maximum: .seconds(4), attempts: 5),
        confirmedWrites: Bool = false
    ) async throws(BlueZError) -> Connection {
        let adapterPath = BlueZAdapter.path(adapter)
        let adapterProperties = try await BlueZAdapter.requirePowered(bus: bus, adapter: adapterPath)
        let adapterAddress = adapterProperties["Address"]?.stringValue.flatMap { BluetoothAddress($0) }
        // Discovery and Device1.Connect take the adapter's turn (one LE connection creation at a time); the
        // deadline starts with the turn, so waiting behind another peer does not shorten this one's setup.
        // The system bus's bluetoothd drives the same controllers as the kernel backend: the same queue.
        let adapterName = String(adapterPath.split(separator: "/").last ?? "hci0")
        let queue = ConnectQueue.shared(for: bus.address.map { "\($0) \(adapterName)" } ?? adapterName)
        let created = try await queue.run { () async throws(BlueZError) in
            let deadline = ContinuousClock.now + timeout
            let (device, discovered) = try await locate(target, bus: bus, adapter: adapterPath, deadline: deadline, timeout: timeout)
            let watch = try await BlueZDeviceWatch.start(bus: bus, device: device)
            let wasConnected = watch.snapshot.connected
            if !wasConnected {
                do throws(BlueZError) {
                    try await connect(device, bus: bus, deadline: deadline, backoff: backoff)
                } catch {
                    watch.cancel()
                    if watch.snapshot.connected {
                        _ = try? await bus.call(destination: "org.bluez", path: device, interface: "org.bluez.Device1",
                                                member: "Disconnect")
                    }
                    throw error
                }
            }
            return (device, discovered, watch, wasConnected, deadline)
        }
        guard let created else { throw .connectFailed(device: target.description, attempts: 0, reason: "cancelled") }
        let (device, discovered, watch, wasConnected, deadline) = created
        // A connection we made and then could not use is ended again; one that another client made is left alone.
        do throws(BlueZError) {
            let state = await watch.wait(until: deadline) { $0.servicesResolved || $0.lost }
            guard let state else { throw .servicesNotResolved(device: device, timeout: timeout) }
            guard !state.lost else { throw .disconnected(device: device) }
            let properties: [String: DBusValue]
            do throws(DBusError) {
                properties = try await bus.allProperties(destination: "org.bluez", path: device, interface: "org.bluez.Device1")
            } catch {
                throw BlueZError(error, calling: "reading \(device)")
            }
            var peer = discovered ?? DiscoveredPeer(bluezDevice: device) ?? DiscoveredPeer(peer: BluetoothPeer(address: .any), rssi: 127)
            peer.merge(bluezDevice: properties)
            let (link, mtu, acquired, psm) = try await open(profile, device: device, bus: bus, confirmedWrites: confirmedWrites)
            let connection = Connection(link: link, peer: peer.peer, device: device, mtu: mtu, acquired: acquired,
                                        madeTheConnection: !wasConnected, channelPSM: psm,
                                        adapterAddress: adapterAddress, bus: bus, watch: watch)
            watch.onDisconnect { reason in
                if let link = link as? AcquiredLink { link.disconnect(reason: reason) }
                if let link = link as? BlueZValueLink { link.disconnect(reason: reason) }
            }
            if !watch.snapshot.connected {
                await connection.disconnect()
                throw .disconnected(device: device)
            }
            return connection
        } catch {
            watch.cancel()
            if !wasConnected, watch.snapshot.connected {
                _ = try? await bus.call(destination: "org.bluez", path: device, interface: "org.bluez.Device1",
                                        member: "Disconnect")
            }
            throw error
        }
    }

    // MARK: - Steps

    /// The Device1 path of `target`: directly for an address bluetoothd knows or a name of a device already
    /// connected (a connected peripheral usually stops advertising), else through discovery.
    private static func locate(
        _ target: CentralTarget, bus: DBusConnection, adapter: String, deadline: ContinuousClock.Instant,
        timeout: Duration
    ) async throws(BlueZError) -> (String, DiscoveredPeer?) {
        let objects: [String: [String: [String: DBusValue]]]
        do throws(DBusError) {
            objects = try await bus.managedObjects(destination: "org.bluez", path: "/")
        } catch {
            throw BlueZError(error, calling: "GetManagedObjects")
        }
        let filter: ScanFilter
        switch target {
        case let .peer(peer):
            let path = BlueZAdapter.devicePath(adapter: adapter, address: peer.address)
            if objects[path]?["org.bluez.Device1"] != nil { return (path, nil) }
            filter = ScanFilter()
        case let .name(name):
            let prefix = adapter + "/dev_"
            if let path = objects.keys.sorted().first(where: { path in
                guard path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/"),
                      let device = objects[path]?["org.bluez.Device1"] else { return false }
                return device["Name"]?.stringValue == name && device["Connected"]?.boolValue == true
            }) { return (path, nil) }
            filter = ScanFilter(name: name)
        }
        let discovery = try await BlueZDiscovery.start(bus: bus, adapter: adapter, filter: filter)
        let found = await withTimeout(deadline - .now) { () async -> DiscoveredPeer? in
            while let peer = try? await discovery.reports.next() {
                if case let .peer(wanted) = target, peer.peer.address != wanted.address { continue }
                return peer
            }
            return nil
        }
        await discovery.stop()
        guard let found else { throw .deviceNotFound(target.description, timeout: timeout) }
        return (BlueZAdapter.devicePath(adapter: adapter, address: found.peer.address), found)
    }

    /// `Device1.Connect`, retried per `backoff` while bluetoothd reports a busy radio: up to `backoff.attempts`
    /// failures, but a connect that bluetoothd is still at (InProgress, no answer in time) is asked again until
    /// the deadline, whatever the count: it waits for a peripheral that does not advertise now.
    private static func connect(
        _ device: String, bus: DBusConnection, deadline: ContinuousClock.Instant, backoff: ReconnectBackoff
    ) async throws(BlueZError) {
        var failures = 0
        var attempts = 0
        while true {
            attempts += 1
            // An attempt waits at most 10 s, so that a Connect stuck in bluetoothd is asked again.
            let remaining = max(.seconds(1), min(.seconds(10), deadline - .now))
            do throws(DBusError) {
                _ = try await bus.call(destination: "org.bluez", path: device, interface: "org.bluez.Device1",
                                       member: "Connect", timeout: remaining)
                return
            } catch {
                if error.name == "org.bluez.Error.AlreadyConnected" { return }
                guard isBusyRadio(error) else { throw BlueZError(error, calling: "Device1.Connect on \(device)") }
                if !isStillConnecting(error) { failures += 1 }
                let delay = backoff.delay(afterFailures: max(1, failures))
                guard failures < max(1, backoff.attempts), ContinuousClock.now + delay < deadline else {
                    throw .connectFailed(device: device, attempts: attempts, reason: error.description)
                }
                try? await Task.sleep(for: delay)
                if Task.isCancelled { throw .connectFailed(device: device, attempts: attempts, reason: "cancelled") }
            }
        }
    }

    /// The connect failures another attempt may fix (bleak retries the same ones), and a Connect that did
    /// not answer in time: bluetoothd keeps an LE connect pending while the peripheral does not advertise (one
    /// that serves another central now, e.g. msgpipe's through a bluetoothd before 5.76), and the kernel may
    /// hold it after the controller refused at once.
    static func isBusyRadio(_ error: DBusError) -> Bool {
        guard case let .remote(name, message) = error else { return false }
        switch name {
        case "org.bluez.Error.InProgress", "org.freedesktop.DBus.Error.NoReply": return true
        case "org.bluez.Error.Failed":
            return message.contains("le-connection-abort-by-local") || message.contains("Operation already in progress")
        default: return false
        }
    }

    /// A busy-radio error that says the earlier connect is still under way, not that it failed.
    static func isStillConnecting(_ error: DBusError) -> Bool {
        guard case let .remote(name, message) = error else { return false }
        return name == "org.bluez.Error.InProgress" || name == "org.freedesktop.DBus.Error.NoReply"
            || message.contains("Operation already in progress")
    }

    /// Finds the profile's characteristics under `device`, opens the link on them and reads the channel PSM
    /// the service publishes, if any.
    private static func open(
        _ profile: GATTServiceProfile, device: String, bus: DBusConnection, confirmedWrites: Bool
    ) async throws(BlueZError) -> (any Link, Int, Bool, UInt16?) {
        let objects: [String: [String: [String: DBusValue]]]
        do throws(DBusError) {
            objects = try await bus.managedObjects(destination: "org.bluez", path: "/")
        } catch {
            throw BlueZError(error, calling: "GetManagedObjects")
        }
        let below = device + "/"
        guard let service = objects.keys.sorted().first(where: { path in
            guard path.hasPrefix(below), let properties = objects[path]?["org.bluez.GattService1"] else { return false }
            return properties["Device"]?.stringValue == device
                && properties["UUID"]?.stringValue.flatMap(BluetoothUUID.init) == profile.service
        }) else { throw .serviceNotFound(uuid: profile.service.description, device: device) }
        func characteristic(_ uuid: BluetoothUUID) throws(BlueZError) -> (path: String, flags: Set<String>, mtu: Int?) {
            for path in objects.keys.sorted() where path.hasPrefix(service + "/") {
                guard let properties = objects[path]?["org.bluez.GattCharacteristic1"],
                      properties["Service"]?.stringValue == service,
                      properties["UUID"]?.stringValue.flatMap(BluetoothUUID.init) == uuid else { continue }
                let flags = Set((properties["Flags"]?.stringArray ?? []).prefix(32))
                return (path, flags, properties["MTU"]?.uint16Value.map(Int.init))
            }
            throw .characteristicNotFound(uuid: uuid.description, service: profile.service.description)
        }
        let write = try characteristic(profile.rx)
        let notify = try characteristic(profile.tx)
        guard !write.flags.isDisjoint(with: ["write", "write-without-response"]) else {
            throw .characteristicNotFound(uuid: profile.rx.description, service: profile.service.description)
        }
        guard !notify.flags.isDisjoint(with: ["notify", "indicate"]) else {
            throw .characteristicNotFound(uuid: profile.tx.description, service: profile.service.description)
        }
        if confirmedWrites, !write.flags.contains("write") {
            throw .characteristicNotFound(uuid: profile.rx.description + " (with write, for confirmed writes)",
                                          service: profile.service.description)
        }
        var psm: UInt16?
        if let published = try? characteristic(GATTServiceProfile.channelPSM) {
            psm = (try? await readPSM(published.path, bus: bus)) ?? nil
        }
        if !confirmedWrites, write.flags.contains("write-without-response"), notify.flags.contains("notify"),
           let acquired = try await acquire(write: write.path, notify: notify.path, bus: bus) {
            return (acquired.0, acquired.1, acquired.2, psm)
        }
        let mtu = write.mtu ?? notify.mtu ?? 23
        let link = try await BlueZValueLink.start(
            bus: bus, write: write.path, notify: notify.path, maximumPacketSize: maximumWriteSize(mtu: mtu),
            writeType: confirmedWrites || !write.flags.contains("write-without-response") ? .request : .command)
        return (link, mtu, false, psm)
    }

    /// The PSM the characteristic at `path` holds (`ReadValue`), nil for a value that names no LE PSM.
    private static func readPSM(_ path: String, bus: DBusConnection) async throws(DBusError) -> UInt16? {
        let reply = try await bus.call(destination: "org.bluez", path: path, interface: "org.bluez.GattCharacteristic1",
                                       member: "ReadValue", arguments: [.variantDictionary([])])
        return reply.first?.bytesValue.flatMap(GATTServiceProfile.channelPSM(fromValue:))
    }

    /// `AcquireWrite` and `AcquireNotify` into an ``AcquiredLink``; nil when bluetoothd refuses them in a way
    /// the fallback may get around (not supported, already acquired by another client, too old).
    private static func acquire(write: String, notify: String, bus: DBusConnection) async throws(BlueZError) -> (any Link, Int, Bool)? {
        guard let writer = try await acquireDescriptor(write, "AcquireWrite", bus: bus) else { return nil }
        let notifier: (fd: Int32, mtu: Int)?
        do throws(BlueZError) {
            notifier = try await acquireDescriptor(notify, "AcquireNotify", bus: bus)
        } catch {
            Glibc.close(writer.fd)
            throw error
        }
        guard let notifier else {
            Glibc.close(writer.fd)
            return nil
        }
        do throws(LinkError) {
            let link = try AcquiredLink(sending: writer.fd, receiving: notifier.fd,
                                        maximumPacketSize: maximumWriteSize(mtu: writer.mtu),
                                        resubscribe: { try await resubscribe(notify, bus: bus) })
            return (link, writer.mtu, true)
        } catch {
            throw .dbus(.failed("opening the acquired descriptors: \(error)"))
        }
    }

    /// `AcquireWrite` / `AcquireNotify` on `path`: the descriptor and the MTU; nil when bluetoothd refuses in a
    /// way the fallback may get around (not supported, already acquired by another client, too old).
    private static func acquireDescriptor(_ path: String, _ member: String, bus: DBusConnection) async throws(BlueZError) -> (fd: Int32, mtu: Int)? {
        do throws(DBusError) {
            let reply = try await bus.call(destination: "org.bluez", path: path, interface: "org.bluez.GattCharacteristic1",
                                           member: member, arguments: [.variantDictionary([])])
            guard reply.count == 2, let fd = reply[0].fileDescriptorValue?.take(), let mtu = reply[1].uint16Value else {
                throw DBusError.malformed("\(member) answered \(reply.map(\.signature)) instead of (h, q)")
            }
            return (fd, Int(mtu))
        } catch {
            switch error.name {
            case "org.bluez.Error.NotSupported", "org.bluez.Error.NotPermitted", "org.bluez.Error.InProgress",
                 "org.freedesktop.DBus.Error.UnknownMethod":
                return nil
            default:
                throw BlueZError(error, calling: "GattCharacteristic1.\(member) on \(path)")
            }
        }
    }

    /// A new notify descriptor after the link closed its old one (``AcquiredLink/renewIncoming()``): bluetoothd
    /// writes the peer's CCCD off, then on. It sees the old descriptor close in its main loop, possibly after
    /// this call, and refuses with NotPermitted while it still counts it; it says `NotifyAcquired` false once it
    /// let it go, and that signal (watched before the first call, so none falls between) is what a refused call
    /// waits for, at most a second each time, before asking again (three calls in all).
    private static func resubscribe(_ notify: String, bus: DBusConnection) async throws -> Int32 {
        let released = BoundedAsyncQueue<Void, Never>(capacity: 1)
        let watch = try await bus.addMatch(DBusMatchRule(
            sender: "org.bluez", path: notify, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", arg0: "org.bluez.GattCharacteristic1")
        ) { signal in
            guard signal.arguments.count >= 2, signal.arguments[1].stringKeyed?["NotifyAcquired"]?.boolValue == false
            else { return }
            _ = try? released.tryPush(())
        }
        defer { watch.cancel() }
        for call in 1...3 {
            if let notifier = try await acquireDescriptor(notify, "AcquireNotify", bus: bus) { return notifier.fd }
            if call < 3 { _ = await withTimeout(.seconds(1)) { await released.next() } }
        }
        throw BlueZError.dbus(.failed("AcquireNotify on \(notify) was refused, and bluetoothd did not let the old descriptor go"))
    }
}
