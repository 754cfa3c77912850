public import Backpressure
public import BluetoothCore
public import GATT
import Glibc
public import SDBus
import Synchronization

/// A msgpipe peripheral beside bluetoothd: registers a GATT application for `profile` and an advertisement,
/// answers `AcquireWrite`/`AcquireNotify` with socketpairs, and yields one ``AcquiredLink`` per connected
/// device once it holds both descriptors (the notify one says the central subscribed). Its parts: the
/// exported objects (BlueZGATTApplication), the registration kept across bluetoothd restarts and the
/// advertisement (BlueZRegistration), one central at a time (CentralTurns), and the links (here).
/// bluetoothd may restart: when it leaves the bus every link it handed out is disconnected, and when it is back
/// the same objects are registered again; ``connections`` finishes only at ``stop()``. Each step is an ``Event``.
/// With `oneCentralAtATime` (bluetoothd before 5.76, see ``BlueZVersion``) the advertisement is withdrawn while
/// a central is served and registered again when it leaves, its link ends or its turn times out; an acquire
/// from another device meanwhile is refused (org.bluez.Error.Failed).
public final class BlueZPeripheral: Sendable {
    /// What happened to the registration with bluetoothd after ``start(bus:adapter:profile:info:localName:root:backlog:security:oneCentralAtATime:turnTimeout:onEvent:)``.
    public enum Event: Sendable, Equatable {
        /// bluetoothd left the bus: the application and advertisement are gone, and this many connected
        /// links were disconnected.
        case bluetoothdLeft(disconnectedLinks: Int)
        /// bluetoothd came back (a new owner of org.bluez) and the application and advertisement are
        /// registered with it again.
        case registeredAgain
        /// Registering with the new bluetoothd failed (why); the peripheral tries again when the adapter
        /// appears (InterfacesAdded) or bluetoothd restarts once more.
        case registrationFailed(String)
        /// One central at a time: the advertisement was taken away (`false`, a central connected) or
        /// registered again (`true`, it left).
        case advertising(Bool)
        /// Taking the advertisement away or registering it again failed (why); tried again at the next change.
        case advertisingFailed(String)
        /// bluetoothd closed the notify descriptor of a central (its address) that stays connected and keeps
        /// writing: it unsubscribed, or bluetoothd lost its subscription when another central left (BlueZ issue
        /// #1452, 5.78 and later). Its link lives on; what is sent to it waits until it subscribes again.
        case subscriptionLost(peer: String)
    }

    /// One accepted central.
    public struct Connection: Sendable {
        public let link: AcquiredLink
        /// The central's address, "AA:BB:CC:DD:EE:FF".
        public let peer: String
        /// Its Device1 object path.
        public let device: String
    }

    /// Accepted connections, bounded: a full queue refuses the next acquire with org.bluez.Error.Failed.
    public let connections: BoundedAsyncQueue<Connection, Never>
    private let registrations = Mutex<[DBusRegistration]>([])
    /// Links handed out, by device path, so Device1.Connected false ends the right one.
    private let links = Mutex<[String: AcquiredLink]>([:])
    private let registration: BlueZRegistration
    private let turns: CentralTurns
    private let onEvent: @Sendable (Event) -> Void
    private let bus: DBusConnection
    /// The path of our pairing agent, when one is registered (security above low).
    private let agent: String?
    /// False: several centrals at once (bluetoothd 5.76 or later).
    public var servesOneCentralAtATime: Bool { turns.enabled }

    private init(capacity: Int, bus: DBusConnection, agent: String?, registration: BlueZRegistration, turns: CentralTurns,
                 onEvent: @escaping @Sendable (Event) -> Void) {
        connections = BoundedAsyncQueue(capacity: capacity)
        self.bus = bus
        self.agent = agent
        self.registration = registration
        self.turns = turns
        self.onEvent = onEvent
    }

    /// The largest ATT_MTU whose whole Write Command value bluetoothd before 5.69 passes on: it drops values
    /// over 510 bytes (`src/shared/gatt-server.c` checks handle + value against the 512-byte attribute limit;
    /// fixed upstream in 2023). Our info characteristic names it so that centrals write at most 510 bytes.
    public static let largestWholeWriteMTU: UInt16 = 513

    /// The address in a Device1 path (/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF), or the path itself.
    public static func peerAddress(devicePath: String) -> String {
        guard let last = devicePath.split(separator: "/").last, last.hasPrefix("dev_") else { return devicePath }
        return String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
    }

    /// Exports the application and advertisement under `root` and registers both with bluetoothd's
    /// `adapter` (an object path such as /org/bluez/hci0). `onEvent` hears about bluetoothd leaving and
    /// coming back; it is called on the bus thread or a task and must return quickly. `oneCentralAtATime`
    /// for a bluetoothd older than ``BlueZVersion/perCentralSockets`` (or of unknown version); `turnTimeout`:
    /// how long a connected central has to complete its link before its turn passes.
    public static func start(
        bus: DBusConnection, adapter: String = "/org/bluez/hci0", profile: GATTServiceProfile, info: MsgPipeServiceInfo,
        localName: String, root: String = "/org/msgpipe", backlog: Int = 8, security: L2CAPSecurityLevel = .low,
        oneCentralAtATime: Bool = false, turnTimeout: Duration = .seconds(10),
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async throws(BlueZError) -> BlueZPeripheral {
        let application = BlueZGATTApplication(root: root, profile: profile, info: info, localName: localName, security: security)
        let app = application.app
        let agent = application.agent
        let registration = BlueZRegistration(
            bus: bus, adapter: adapter, advertisementPath: application.advertisement, onEvent: onEvent
        ) { () throws(DBusError) in
            // The agent first: the first central's subscription already asks for pairing.
            if let agent { try await BlueZJustWorksAgent.register(agent, on: bus) }
            // AlreadyExists: an earlier attempt with this bluetoothd got that far (a restarted bluetoothd adds
            // GattManager1 and LEAdvertisingManager1 to the adapter one after the other).
            do throws(DBusError) {
                _ = try await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.GattManager1",
                                       member: "RegisterApplication", arguments: [.objectPath(app), .variantDictionary([])])
            } catch where error.name == "org.bluez.Error.AlreadyExists" {}
        }
        let turns = CentralTurns(enabled: oneCentralAtATime, timeout: turnTimeout) { [weak registration] advertise in
            registration?.setAdvertising(advertise)
        }
        let peripheral = BlueZPeripheral(capacity: max(1, backlog), bus: bus, agent: agent, registration: registration,
                                         turns: turns, onEvent: onEvent)
        let adapterName = String(adapter.split(separator: "/").last ?? "")
        let powered: Bool
        do throws(DBusError) {
            let properties = try await bus.allProperties(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1")
            powered = properties["Powered"]?.boolValue ?? true
        } catch {
            switch error.name {
            case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
                 "org.freedesktop.DBus.Error.InvalidArgs":
                throw .adapterNotFound(adapterName)
            default:
                throw BlueZError(error, calling: "reading \(adapter)")
            }
        }
        guard powered else { throw .adapterPoweredOff(adapterName) }
        do throws(DBusError) {
            var exported = try await application.export(on: bus) { call, notify throws(DBusError) in
                try peripheral.acquire(call, notify: notify)
            }
            exported.append(try await bus.addMatch(
                .propertiesChanged(sender: "org.bluez", pathNamespace: adapter, interface: "org.bluez.Device1")
            ) { [weak peripheral] signal in
                guard signal.arguments.count >= 2, let connected = signal.arguments[1].stringKeyed?["Connected"]?.boolValue
                else { return }
                guard !connected else {
                    peripheral?.turns.connected(signal.path)
                    return
                }
                peripheral?.turns.disconnected(signal.path)
                guard let link = peripheral?.links.withLock({ $0.removeValue(forKey: signal.path) }) else { return }
                link.disconnect(reason: "the central disconnected (Device1.Connected false)")
            })
            exported.append(try await bus.addMatch(.nameOwnerChanged("org.bluez")) { [weak peripheral] signal in
                guard signal.arguments.count == 3, let old = signal.arguments[1].stringValue,
                      let new = signal.arguments[2].stringValue else { return }
                if !old.isEmpty { peripheral?.bluetoothdLeft() }
                if !new.isEmpty { peripheral?.registration.registerAgain() }
            })
            // A restarted bluetoothd takes the name before its adapters are back, and adds the adapter's
            // GattManager1 and (once the kernel told it the advertising features) LEAdvertisingManager1 one
            // after the other: try again as each appears.
            exported.append(try await bus.addMatch(.interfacesAdded(sender: "org.bluez")) { [weak peripheral] signal in
                guard signal.arguments.count == 2, let path = signal.arguments[0].stringValue,
                      let interfaces = signal.arguments[1].stringKeyed else { return }
                // A central bluetoothd did not know yet: its Device1 may arrive already connected.
                if path.hasPrefix(adapter + "/dev_"), interfaces["org.bluez.Device1"]?.stringKeyed?["Connected"] == .boolean(true) {
                    peripheral?.turns.connected(path)
                }
                guard path == adapter,
                      interfaces["org.bluez.GattManager1"] != nil || interfaces["org.bluez.LEAdvertisingManager1"] != nil
                else { return }
                peripheral?.registration.registerAgain()
            })
            peripheral.registrations.withLock { $0 = exported }
            try await registration.registerFirst()
        } catch {
            peripheral.stop()
            throw BlueZError(error, calling: "registering the GATT application on \(adapter)")
        }
        return peripheral
    }

    /// Takes the advertisement away (a registration in flight completes first), then ``stop()``: a peripheral
    /// that served its last central leaves no advertisement behind. Waits at most `bound` for bluetoothd.
    public func close(within bound: Duration = .seconds(2)) async {
        await registration.withdrawAdvertising(within: bound)
        stop()
    }

    /// Unexports everything (bluetoothd drops the application) and ends the connection sequence.
    public func stop() {
        if registration.stop(), let agent { BlueZJustWorksAgent.unregister(agent, on: bus) }
        for registration in registrations.withLock({ $0 }) { registration.cancel() }
        connections.finish()
    }

    /// bluetoothd left the bus (on the bus thread): its ends of every descriptor are gone, so every link and
    /// half-acquired pair ends here, and the registration with it too.
    private func bluetoothdLeft() {
        registration.bluetoothdLeft()
        turns.reset()
        let ended = links.withLock { links in defer { links.removeAll() }; return Array(links.values) }
        var disconnected = 0
        for link in ended where !link.hasEnded {
            link.disconnect(reason: "bluetoothd left the bus")
            disconnected += 1
        }
        onEvent(.bluetoothdLeft(disconnectedLinks: disconnected))
    }

    /// AcquireWrite / AcquireNotify({device, mtu, link}): a SEQPACKET socketpair, one end to bluetoothd.
    private func acquire(_ call: DBusMethodCall, notify: Bool) throws(DBusError) -> [DBusValue] {
        guard let options = call.arguments.first?.stringKeyed, let device = options["device"]?.stringValue else {
            throw .invalidArguments("no device option")
        }
        let mtu = Int(options["mtu"]?.uint16Value ?? 23)
        guard turns.mayAcquire(device) else {
            // bluetoothd before 5.76 would mix this central's packets with the served one's.
            throw .remote(name: "org.bluez.Error.Failed",
                          message: "msgpipe serves one central at a time through this bluetoothd (before 5.76): another central is connected")
        }
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw .system(operation: "socketpair", errno: errno) }
        // The device's link, if one of its halves came already: this is the other half (or a new one).
        if let link = links.withLock({ links in links[device].flatMap { $0.hasEnded ? nil : $0 } }) {
            do {
                if notify { try link.attach(sending: fds[0]) } else { try link.attach(receiving: fds[0]) }
            } catch {
                Glibc.close(fds[1])
                throw .failed("\(error)")
            }
            return [.unixFD(DBusFileDescriptor(adopting: fds[1])), .uint16(UInt16(clamping: mtu))]
        }
        // The first half makes the link: a central that only subscribes (a phone receiving) or only writes
        // is served too; the other half is attached when bluetoothd acquires it.
        do {
            // A lost subscription is not the end of the connection: the central may subscribe again (a msgpipe
            // central does when it hears nothing, e.g. after bluez#1452 in 5.78+ closed its socket, or when a
            // bluetoothd before 5.76 closed the shared one), and its new descriptor is attached. The write
            // descriptor hanging up, or Device1.Connected false, still ends it.
            let peer = Self.peerAddress(devicePath: device)
            let link = try AcquiredLink(sending: notify ? fds[0] : nil, receiving: notify ? nil : fds[0],
                                        maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: mtu),
                                        keepsConnectionWithoutSender: true,
                                        onSenderLost: { [onEvent] in onEvent(.subscriptionLost(peer: peer)) })
            links.withLock { links in
                links = links.filter { !$0.value.hasEnded }  // links that ended on their own
                links[device] = link
            }
            turns.linked(device, link)
            guard try connections.tryPush(Connection(link: link, peer: peer, device: device)) else {
                link.disconnect(reason: "too many connections waiting to be accepted")
                Glibc.close(fds[1])
                throw DBusError.remote(name: "org.bluez.Error.Failed", message: "too many connections waiting")
            }
        } catch let error as DBusError {
            throw error
        } catch {
            Glibc.close(fds[1])
            throw .failed("\(error)")
        }
        return [.unixFD(DBusFileDescriptor(adopting: fds[1])), .uint16(UInt16(clamping: mtu))]
    }
}
