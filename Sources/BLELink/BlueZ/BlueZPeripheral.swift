public import Backpressure
public import GATT
import Glibc
import Synchronization

/// A msgpipe peripheral beside bluetoothd: registers a GATT application for `profile` and an advertisement,
/// answers `AcquireWrite`/`AcquireNotify` with socketpairs, and yields one ``AcquiredLink`` per connected
/// device once it holds both descriptors (the notify one says the central subscribed).
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

    /// Whether the application is registered with the current bluetoothd, and the attempt under way.
    private struct RegistrationState {
        var registered = false
        var attempting = false
        /// Something happened during an attempt (the adapter appeared) that calls for one more.
        var again = false
        /// Bumped whenever bluetoothd leaves: an attempt that started earlier did not register with the new one.
        var generation = 0
        var stopped = false
        /// Whether the advertisement should be registered (false while one central at a time is served) and
        /// whether it is; a change in flight is `changingAdvertising`.
        var advertise = true
        var advertised = false
        var changingAdvertising = false
    }

    /// Whose turn it is, when one central at a time is served.
    private struct Turn {
        /// The device served now (its link is up, or it connected or acquired and has ``turnTimeout`` to finish).
        var holder: String?
        /// Bumped at each new holder, so a timer of an earlier turn does nothing.
        var number = 0
        /// The holder's link is up (both descriptors acquired).
        var linked = false
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
    private let registration = Mutex(RegistrationState())
    private let onEvent: @Sendable (Event) -> Void
    /// Registers the application and the advertisement with whoever owns org.bluez now.
    private let register: @Sendable () async throws(DBusError) -> Void
    private let bus: DBusConnection
    /// The path of our pairing agent, when one is registered (security above low).
    private let agent: String?
    private let adapter: String
    private let advertisementPath: String
    /// Whose turn it is (only with ``servesOneCentralAtATime``).
    private let turn = Mutex(Turn())
    /// False: several centrals at once (bluetoothd 5.76 or later).
    public let servesOneCentralAtATime: Bool

    /// How long a central that connected, or acquired one descriptor, has to complete its link before its
    /// turn passes (one central at a time).
    private let turnTimeout: Duration

    private init(capacity: Int, bus: DBusConnection, agent: String?, adapter: String, advertisement: String,
                 oneCentralAtATime: Bool, turnTimeout: Duration, onEvent: @escaping @Sendable (Event) -> Void,
                 register: @escaping @Sendable () async throws(DBusError) -> Void) {
        connections = BoundedAsyncQueue(capacity: capacity)
        self.bus = bus
        self.agent = agent
        self.adapter = adapter
        advertisementPath = advertisement
        servesOneCentralAtATime = oneCentralAtATime
        self.turnTimeout = turnTimeout
        self.onEvent = onEvent
        self.register = register
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
        let app = root + "/app"
        let advertisement = root + "/advertisement0"
        // Just Works pairing needs an agent that confirms: ours, for medium. Not for high: a NoInputNoOutput
        // agent cannot authenticate, and as the default agent it would also set the adapter's IO capability
        // to NoInputNoOutput (src/agent.c set_io_cap) and take the pairing away from an agent with input
        // (bluetoothctl's) that can.
        let agent = security == .medium ? root + "/agent" : nil
        let peripheral = BlueZPeripheral(capacity: max(1, backlog), bus: bus, agent: agent, adapter: adapter,
                                         advertisement: advertisement, oneCentralAtATime: oneCentralAtATime,
                                         turnTimeout: turnTimeout,
                                         onEvent: onEvent) { () throws(DBusError) in
            // The agent first: the first central's subscription already asks for pairing.
            if let agent { try await registerAgent(agent, on: bus) }
            // AlreadyExists: an earlier attempt with this bluetoothd got that far (a restarted bluetoothd adds
            // GattManager1 and LEAdvertisingManager1 to the adapter one after the other).
            do throws(DBusError) {
                _ = try await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.GattManager1",
                                       member: "RegisterApplication", arguments: [.objectPath(app), .variantDictionary([])])
            } catch where error.name == "org.bluez.Error.AlreadyExists" {}
        }
        let service = app + "/service0"
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
        let flags = characteristicFlags(profile: profile, security: security)
        do throws(DBusError) {
            var exported = [try await bus.addObjectManager(at: app)]
            if let agent { exported.append(try await bus.export(justWorksAgent, at: agent)) }
            exported.append(try await bus.addMatch(
                .propertiesChanged(sender: "org.bluez", pathNamespace: adapter, interface: "org.bluez.Device1")
            ) { [weak peripheral] signal in
                guard signal.arguments.count >= 2, let connected = signal.arguments[1].stringKeyed?["Connected"]?.boolValue
                else { return }
                guard !connected else {
                    peripheral?.deviceConnected(signal.path)
                    return
                }
                peripheral?.deviceDisconnected(signal.path)
                guard let link = peripheral?.links.withLock({ $0.removeValue(forKey: signal.path) }) else { return }
                link.disconnect(reason: "the central disconnected (Device1.Connected false)")
            })
            exported.append(try await bus.addMatch(.nameOwnerChanged("org.bluez")) { [weak peripheral] signal in
                guard signal.arguments.count == 3, let old = signal.arguments[1].stringValue,
                      let new = signal.arguments[2].stringValue else { return }
                if !old.isEmpty { peripheral?.bluetoothdLeft() }
                if !new.isEmpty { peripheral?.registerAgain() }
            })
            // A restarted bluetoothd takes the name before its adapters are back, and adds the adapter's
            // GattManager1 and (once the kernel told it the advertising features) LEAdvertisingManager1 one
            // after the other: try again as each appears.
            exported.append(try await bus.addMatch(.interfacesAdded(sender: "org.bluez")) { [weak peripheral] signal in
                guard signal.arguments.count == 2, let path = signal.arguments[0].stringValue,
                      let interfaces = signal.arguments[1].stringKeyed else { return }
                // A central bluetoothd did not know yet: its Device1 may arrive already connected.
                if path.hasPrefix(adapter + "/dev_"), interfaces["org.bluez.Device1"]?.stringKeyed?["Connected"] == .boolean(true) {
                    peripheral?.deviceConnected(path)
                }
                guard path == adapter,
                      interfaces["org.bluez.GattManager1"] != nil || interfaces["org.bluez.LEAdvertisingManager1"] != nil
                else { return }
                peripheral?.registerAgain()
            })
            exported.append(try await bus.export(DBusInterface(name: "org.bluez.GattService1", properties: [
                DBusProperty("UUID", .string(profile.service.description)), DBusProperty("Primary", .boolean(true)),
            ]), at: service))
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.GattCharacteristic1",
                methods: [
                    DBusMethod("AcquireWrite", input: "a{sv}", output: "hq") { call throws(DBusError) in
                        try peripheral.acquire(call, notify: false)
                    },
                    DBusMethod("WriteValue", input: "aya{sv}") { _ throws(DBusError) in
                        throw .remote(name: "org.bluez.Error.NotSupported", message: "write through AcquireWrite")
                    },
                ],
                properties: [
                    DBusProperty("UUID", .string(profile.rx.description)), DBusProperty("Service", .objectPath(service)),
                    DBusProperty("Flags", .strings(flags.rx)),
                    DBusProperty("WriteAcquired", .boolean(false)),
                ]), at: service + "/char0"))
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.GattCharacteristic1",
                methods: [
                    DBusMethod("AcquireNotify", input: "a{sv}", output: "hq") { call throws(DBusError) in
                        try peripheral.acquire(call, notify: true)
                    },
                    DBusMethod("StartNotify") { _ throws(DBusError) in
                        throw .remote(name: "org.bluez.Error.NotSupported", message: "notify through AcquireNotify")
                    },
                    DBusMethod("StopNotify") { _ in [] },
                ],
                properties: [
                    DBusProperty("UUID", .string(profile.tx.description)), DBusProperty("Service", .objectPath(service)),
                    DBusProperty("Flags", .strings(flags.tx)), DBusProperty("NotifyAcquired", .boolean(false)),
                ]), at: service + "/char1"))
            // Read-only values: the info characteristic, and the channel's PSM (Apple's convention) when open.
            var readOnly: [(BluetoothUUID, [UInt8])] = profile.info.map { [($0, info.bytes)] } ?? []
            if let psm = info.psm {
                readOnly.append((GATTServiceProfile.channelPSM, GATTServiceProfile.channelPSMValue(psm)))
            }
            for (index, (uuid, value)) in readOnly.enumerated() {
                exported.append(try await bus.export(DBusInterface(
                    name: "org.bluez.GattCharacteristic1",
                    methods: [DBusMethod("ReadValue", input: "a{sv}", output: "ay") { call throws(DBusError) in
                        let offset = Int(call.arguments.first?.stringKeyed?["offset"]?.uint16Value ?? 0)
                        guard offset <= value.count else {
                            throw .remote(name: "org.bluez.Error.InvalidOffset", message: "offset \(offset)")
                        }
                        return [.bytes(Array(value[offset...]))]
                    }],
                    properties: [
                        DBusProperty("UUID", .string(uuid.description)), DBusProperty("Service", .objectPath(service)),
                        DBusProperty("Flags", .strings(["read"])),
                    ]), at: service + "/char\(2 + index)"))
            }
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.LEAdvertisement1", methods: [DBusMethod("Release") { _ in [] }],
                properties: [
                    DBusProperty("Type", .string("peripheral")), DBusProperty("LocalName", .string(localName)),
                    DBusProperty("ServiceUUIDs", .strings([profile.service.description])),
                    // LE General Discoverable in the flags: bluetoothd's own unfiltered discovery (a desktop's
                    // scan, bluetoothctl's `scan on`) lists only discoverable advertisers (src/adapter.c).
                    DBusProperty("Discoverable", .boolean(true)),
                ]), at: advertisement))
            peripheral.registrations.withLock { $0 = exported }
            let generation = peripheral.registration.withLock { state in
                state.attempting = true
                return state.generation
            }
            do throws(DBusError) {
                try await peripheral.register()
                try await peripheral.callAdvertising(true)
                peripheral.registration.withLock { $0.advertised = true }
            } catch {
                peripheral.registration.withLock { $0.attempting = false }
                throw error
            }
            peripheral.finishAttempt(generation: generation, failure: nil)
        } catch {
            peripheral.stop()
            throw BlueZError(error, calling: "registering the GATT application on \(adapter)")
        }
        return peripheral
    }

    /// Unexports everything (bluetoothd drops the application) and ends the connection sequence.
    public func stop() {
        let first = registration.withLock { state in defer { state.stopped = true }; return !state.stopped }
        if first, let agent {
            // Best effort: bluetoothd also drops the agent when this connection leaves the bus.
            Task { [bus] in
                _ = try? await bus.call(destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                        member: "UnregisterAgent", arguments: [.objectPath(agent)])
            }
        }
        for registration in registrations.withLock({ $0 }) { registration.cancel() }
        connections.finish()
    }

    // MARK: - Security

    /// The flags of the characteristic the central writes (rx) and the one we notify (tx) for `security`.
    /// The "encrypt-" prefixes put the requirement on the value's permission; "write-without-response" only
    /// adds the property. bluetoothd answers a Write Request on a link that is not secure enough (the central
    /// then pairs) but drops such a Write Command silently. No message is lost to that: tx puts the same
    /// requirement on the CCC descriptor (BlueZ 5.63 and later), a subscription is a Write Request, and a link is
    /// handed out only once the central subscribed. The info characteristic stays plain "read": discovery must
    /// never need security.
    static func characteristicFlags(profile: GATTServiceProfile, security: L2CAPSecurityLevel) -> (rx: [String], tx: [String]) {
        let prefix = switch security {
        case .low: ""
        case .medium: "encrypt-"
        case .high: "encrypt-authenticated-"
        }
        let tx = (profile.txProperties.contains(.notify) ? [prefix + "notify"] : [])
            + (profile.txProperties.contains(.indicate) ? [prefix + "indicate"] : [])
        return ([prefix + "write", "write-without-response"], tx)
    }

    /// org.bluez.Agent1 for Just Works (NoInputNoOutput): confirms and authorizes, refuses anything that
    /// needs a PIN or passkey (org.bluez.Error.Rejected). With it "medium" pairs; "high" (authenticated)
    /// cannot be met by NoInputNoOutput: it needs a passkey or numeric comparison, so it is not registered
    /// for high.
    static let justWorksAgent = DBusInterface(name: "org.bluez.Agent1", methods: [
        DBusMethod("Release") { _ in [] },
        DBusMethod("RequestPinCode", input: "o", output: "s") { _ throws(DBusError) in
            throw .remote(name: "org.bluez.Error.Rejected", message: "msgpipe's agent has no input (NoInputNoOutput)")
        },
        DBusMethod("RequestPasskey", input: "o", output: "u") { _ throws(DBusError) in
            throw .remote(name: "org.bluez.Error.Rejected", message: "msgpipe's agent has no input (NoInputNoOutput)")
        },
        DBusMethod("RequestConfirmation", input: "ou") { _ in [] },
        DBusMethod("RequestAuthorization", input: "o") { _ in [] },
        DBusMethod("AuthorizeService", input: "os") { _ in [] },
        DBusMethod("Cancel") { _ in [] },
    ])

    /// `AgentManager1.RegisterAgent(path, "NoInputNoOutput")` and `RequestDefaultAgent(path)`. bluetoothd
    /// (src/agent.c) puts a default agent at the head of its list and hands the previous one the role back
    /// when ours leaves the bus; if it refuses (another default agent it keeps), we go on with the agent
    /// registered: pairing then goes through the agent the user already has.
    static func registerAgent(_ path: String, on bus: DBusConnection) async throws(DBusError) {
        do throws(DBusError) {
            _ = try await bus.call(destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                   member: "RegisterAgent", arguments: [.objectPath(path), .string("NoInputNoOutput")])
        } catch where error.name == "org.bluez.Error.AlreadyExists" {
            // Registered before (by this connection): keep it.
        }
        _ = try? await bus.call(destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                                member: "RequestDefaultAgent", arguments: [.objectPath(path)])
    }

    // MARK: - bluetoothd leaving and coming back

    /// bluetoothd left the bus (on the bus thread): its ends of every descriptor are gone, so every link and
    /// half-acquired pair ends here, and the registration with it too.
    private func bluetoothdLeft() {
        registration.withLock { state in
            state.registered = false
            state.advertised = false
            state.advertise = true
            state.generation += 1
        }
        turn.withLock { turn in
            turn.holder = nil
            turn.linked = false
            turn.number += 1
        }
        let ended = links.withLock { links in defer { links.removeAll() }; return Array(links.values) }
        var disconnected = 0
        for link in ended where !link.hasEnded {
            link.disconnect(reason: "bluetoothd left the bus")
            disconnected += 1
        }
        onEvent(.bluetoothdLeft(disconnectedLinks: disconnected))
    }

    /// org.bluez has an owner again, or our adapter appeared: registers the same objects again (one attempt
    /// at a time, in a task: the bus thread must not wait for the bus).
    private func registerAgain() {
        let generation = registration.withLock { state -> Int? in
            guard !state.stopped, !state.registered else { return nil }
            guard !state.attempting else {
                state.again = true
                return nil
            }
            state.attempting = true
            state.again = false
            return state.generation
        }
        guard let generation else { return }
        Task { [self] in
            do throws(DBusError) {
                try await register()
                let advertise = registration.withLock { $0.advertise }
                if advertise { try await callAdvertising(true) }
                registration.withLock { state in
                    if state.generation == generation { state.advertised = advertise }
                }
                finishAttempt(generation: generation, failure: nil)
            } catch {
                switch error.name {
                case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
                     "org.freedesktop.DBus.Error.UnknownInterface":
                    // The adapter or its managers are not back yet: their InterfacesAdded starts the next attempt.
                    finishAttempt(generation: generation, failure: nil, notYet: true)
                default:
                    finishAttempt(generation: generation, failure: BlueZError(error, calling: "registering again").description)
                }
            }
        }
    }

    /// Ends an attempt: registered when it succeeded with the bluetoothd of `generation`; another attempt
    /// when something happened meanwhile; else the failure is reported (`notYet`: bluetoothd's adapter is not
    /// complete yet, nothing to report: the next InterfacesAdded tries again).
    private func finishAttempt(generation: Int, failure: String?, notYet: Bool = false) {
        enum Next { case registered, retry, failed, quiet }
        let next = registration.withLock { state -> Next in
            state.attempting = false
            if state.stopped { return .quiet }
            if notYet { return state.again || state.generation != generation ? .retry : .quiet }
            if failure == nil, state.generation == generation {
                state.registered = true
                return generation == 0 ? .quiet : .registered
            }
            if state.again || state.generation != generation { return .retry }
            return .failed
        }
        switch next {
        case .registered: onEvent(.registeredAgain)
        case .retry: registerAgain()
        case .failed: onEvent(.registrationFailed(failure ?? "bluetoothd left during the registration"))
        case .quiet: break
        }
        // A central's turn may have begun or ended during the attempt.
        setAdvertising(registration.withLock { $0.advertise })
    }

    // MARK: - The advertisement, and one central at a time

    /// `RegisterAdvertisement` (`on`) or `UnregisterAdvertisement` with bluetoothd; AlreadyExists and
    /// DoesNotExist mean it already is as asked.
    private func callAdvertising(_ on: Bool) async throws(DBusError) {
        do throws(DBusError) {
            _ = try await bus.call(
                destination: "org.bluez", path: adapter, interface: "org.bluez.LEAdvertisingManager1",
                member: on ? "RegisterAdvertisement" : "UnregisterAdvertisement",
                arguments: on ? [.objectPath(advertisementPath), .variantDictionary([])] : [.objectPath(advertisementPath)])
        } catch where error.name == (on ? "org.bluez.Error.AlreadyExists" : "org.bluez.Error.DoesNotExist") {}
    }

    /// Wants the advertisement registered (`on`) or not, and brings bluetoothd there: one call at a time, in
    /// a task, while the application is registered (a registration attempt registers it as wanted).
    private func setAdvertising(_ on: Bool) {
        let start = registration.withLock { state -> Bool in
            state.advertise = on
            guard !state.changingAdvertising, !state.stopped, state.registered, state.advertised != on else { return false }
            state.changingAdvertising = true
            return true
        }
        if start { Task { await self.changeAdvertising() } }
    }

    private func changeAdvertising() async {
        while true {
            let next = registration.withLock { state -> (on: Bool, generation: Int)? in
                guard !state.stopped, state.registered, state.advertised != state.advertise else {
                    state.changingAdvertising = false
                    return nil
                }
                return (state.advertise, state.generation)
            }
            guard let next else { return }
            do throws(DBusError) {
                try await callAdvertising(next.on)
            } catch {
                let stopped = registration.withLock { state -> Bool in
                    state.changingAdvertising = false
                    return state.stopped
                }
                // Stopped meanwhile: the call failed because its bus went away, which is no advertising failure.
                guard !stopped else { return }
                let call = next.on ? "registering the advertisement again" : "taking the advertisement away"
                onEvent(.advertisingFailed(BlueZError(error, calling: call).description))
                return
            }
            registration.withLock { state in
                if state.generation == next.generation { state.advertised = next.on }
            }
            onEvent(.advertising(next.on))
        }
    }

    /// A device under our adapter connected (Device1.Connected true). With one central at a time and nobody
    /// served, its turn begins: the advertisement goes away before the kernel advertises the instance again.
    private func deviceConnected(_ device: String) {
        guard servesOneCentralAtATime, let number = turn.withLock({ turn -> Int? in
            turn.holder == nil ? Self.begin(&turn, device) : nil
        }) else { return }
        beginTurn(number)
    }

    /// The device left: its turn, if it had one, ends.
    private func deviceDisconnected(_ device: String) {
        endTurn(device: device)
    }

    private static func begin(_ turn: inout Turn, _ device: String) -> Int {
        turn.holder = device
        turn.linked = false
        turn.number += 1
        return turn.number
    }

    /// Takes the advertisement away and ends turn `number` after ``turnTimeout`` unless its link is up by then.
    private func beginTurn(_ number: Int) {
        setAdvertising(false)
        Task { [weak self] in
            guard let timeout = self?.turnTimeout else { return }
            try? await Task.sleep(for: timeout)
            self?.endTurn(number: number, unlessLinked: true)
        }
    }

    /// Ends the current turn (only turn `number`, or `device`'s, when given): the advertisement comes back.
    private func endTurn(number: Int? = nil, device: String? = nil, unlessLinked: Bool = false) {
        guard servesOneCentralAtATime else { return }
        let ended = turn.withLock { turn -> Bool in
            guard turn.holder != nil, number == nil || turn.number == number, device == nil || turn.holder == device,
                  !(unlessLinked && turn.linked) else { return false }
            turn.holder = nil
            turn.linked = false
            return true
        }
        if ended { setAdvertising(true) }
    }

    /// One central at a time: whether `device` may acquire now. It may when it is served, when nobody is, or
    /// when the device served has no link up (it acquired nothing: not a central of ours, or one that only
    /// browsed); then its turn begins.
    private func mayAcquire(_ device: String) -> Bool {
        guard servesOneCentralAtATime else { return true }
        let (allowed, begun) = turn.withLock { turn -> (Bool, Int?) in
            if turn.holder == device { return (true, nil) }
            if turn.holder != nil, turn.linked { return (false, nil) }
            return (true, Self.begin(&turn, device))
        }
        if let begun { beginTurn(begun) }
        return allowed
    }

    /// `device`'s link is up: its turn lasts until the link ends or the device leaves.
    private func linked(_ device: String, _ link: AcquiredLink) {
        guard servesOneCentralAtATime else { return }
        let number = turn.withLock { turn -> Int? in
            guard turn.holder == device else { return nil }
            turn.linked = true
            return turn.number
        }
        guard let number else { return }
        link.whenEnded { [weak self] in self?.endTurn(number: number) }
    }

    /// AcquireWrite / AcquireNotify({device, mtu, link}): a SEQPACKET socketpair, one end to bluetoothd.
    private func acquire(_ call: DBusMethodCall, notify: Bool) throws(DBusError) -> [DBusValue] {
        guard let options = call.arguments.first?.stringKeyed, let device = options["device"]?.stringValue else {
            throw .invalidArguments("no device option")
        }
        let mtu = Int(options["mtu"]?.uint16Value ?? 23)
        guard mayAcquire(device) else {
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
            linked(device, link)
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
