import Backpressure
import BLELink
import BlueZLink
import SDBus
import Glibc
import Synchronization
import Testing

/// A fake org.bluez for the central side, on a private bus: /org/bluez/hci0 with Adapter1 discovery
/// (SetDiscoveryFilter, StartDiscovery, StopDiscovery), an object manager at "/", devices that appear through
/// InterfacesAdded when discovery starts (or are known from the start), a scripted Device1.Connect, and remote
/// GATT objects (GattService1, GattCharacteristic1 with AcquireWrite/AcquireNotify returning socketpair ends,
/// WriteValue, StartNotify) exported once the device connects, then ServicesResolved.
final class FakeBlueZRemote: Sendable {
    static let adapter = "/org/bluez/hci0"

    /// One remote device and how it behaves.
    struct Device: Sendable {
        var address: String
        var addressType = "public"
        var name: String?
        /// nil: no RSSI property (remembered, not heard).
        var rssi: Int16? = -60
        var uuids: [String] = []
        var manufacturerData: [UInt16: [UInt8]] = [:]
        var serviceData: [String: [UInt8]] = [:]
        /// Connect fails this many times with `connectError` first.
        var connectFailures = 0
        var connectError = DBusError.remote(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        /// How long a Connect stays pending before the device is connected and the call answered.
        var connectDelay: Duration = .zero
        var resolvesServices = true
        /// false: as bluetoothd 5.66 when the ATT socket connects before mgmt's Device Connected, Connected
        /// never turns true on the bus (GetAll says true); ServicesResolved still does.
        var emitsConnected = true
        /// Connected (by another client) and its services resolved from the start.
        var alreadyConnected = false
        var service = "4d500001-8c5d-4e2b-9f1a-6d7367706970"
        /// nil: the characteristic is missing.
        var rx: String? = "4d500002-8c5d-4e2b-9f1a-6d7367706970"
        var tx: String? = "4d500003-8c5d-4e2b-9f1a-6d7367706970"
        var rxFlags = ["write", "write-without-response"]
        var txFlags = ["notify", "indicate"]
        var mtu: UInt16 = 185
        /// The value of the channel PSM characteristic (ABDD3056-...); nil: the service has none.
        var psmValue: [UInt8]?

        var path: String { FakeBlueZRemote.adapter + "/dev_" + address.split(separator: ":").joined(separator: "_") }
        var servicePath: String { path + "/service0010" }
        var rxPath: String { servicePath + "/char0011" }
        var txPath: String { servicePath + "/char0013" }
        var psmPath: String { servicePath + "/char0017" }
    }

    /// What the fake saw.
    final class Record: Sendable {
        let filter = Mutex<[String: DBusValue]?>(nil)
        let starts = Mutex(0)
        let stops = Mutex(0)
        let connectAttempts = Mutex(0)
        /// Connect calls not answered yet, now and at the most.
        let connectsPending = Mutex(0)
        let mostConnectsPending = Mutex(0)
        let disconnects = Mutex(0)
        /// The peripheral's ends of the acquired socketpairs.
        let writeEnd = Mutex<Int32?>(nil)
        let notifyEnd = Mutex<Int32?>(nil)
        /// WriteValue calls: value and "type" option.
        let writes = BoundedAsyncQueue<(value: [UInt8], type: String), Never>(capacity: 4096)
        let notifying = Mutex(false)
        /// StartNotify and StopNotify calls, in order ("start", "stop").
        let notifyCalls = Mutex<[String]>([])
        /// StartNotify answers this error when set.
        let startNotifyError = Mutex<DBusError?>(nil)
        /// While true, AcquireNotify is refused with NotPermitted, as bluetoothd does until it saw the previous
        /// notify descriptor close (``FakeBlueZRemote/releaseNotify(device:)`` ends it).
        let notifyHeld = Mutex(false)
        /// One element per AcquireNotify refused because of `notifyHeld` (to wait for), and their count.
        let notifyRefusals = BoundedAsyncQueue<Void, Never>(capacity: 64)
        let notifyRefusalCount = Mutex(0)
        /// StartDiscovery answers this error when set.
        let startDiscoveryError = Mutex<DBusError?>(nil)
    }

    private final class DeviceState: Sendable {
        let connected = Mutex(false)
        let resolved = Mutex(false)
        let rssi: Mutex<Int16>
        init(rssi: Int16) { self.rssi = Mutex(rssi) }
    }

    let bus: DBusConnection
    let record = Record()
    private let registrations = Mutex<[DBusRegistration]>([])
    private let announcedAtDiscovery = Mutex<[Device]>([])
    private let states = Mutex<[String: DeviceState]>([:])

    init(address: String, powered: Bool = true) async throws {
        bus = try DBusConnection(address: address)
        let record = self.record
        let manager = try await bus.addObjectManager(at: "/")
        let adapter = try await bus.export(DBusInterface(
            name: "org.bluez.Adapter1",
            methods: [
                DBusMethod("SetDiscoveryFilter", input: "a{sv}") { call in
                    record.filter.withLock { $0 = call.arguments.first?.stringKeyed }
                    return []
                },
                DBusMethod("StartDiscovery") { [weak self] call throws(DBusError) in
                    record.starts.withLock { $0 += 1 }
                    if let error = record.startDiscoveryError.withLock({ $0 }) { throw error }
                    guard let self else { return [] }
                    let devices = announcedAtDiscovery.withLock { devices in defer { devices = [] }; return devices }
                    call.reply()
                    Task { for device in devices { try? await self.add(device, announce: true) } }
                    return nil
                },
                DBusMethod("StopDiscovery") { _ in
                    record.stops.withLock { $0 += 1 }
                    return []
                },
            ],
            properties: [DBusProperty("Powered", .boolean(powered)), DBusProperty("Address", .string("00:11:22:33:44:55"))]),
            at: Self.adapter)
        registrations.withLock { $0 = [manager, adapter] }
        try await bus.requestName("org.bluez")
    }

    /// `device` appears (InterfacesAdded) once discovery starts.
    func announceWhenDiscovering(_ device: Device) {
        announcedAtDiscovery.withLock { $0.append(device) }
    }

    /// Exports `device`'s Device1 (and announces it with InterfacesAdded when `announce`).
    func add(_ device: Device, announce: Bool = false) async throws {
        let state = DeviceState(rssi: device.rssi ?? 0)
        states.withLock { $0[device.path] = state }
        if device.alreadyConnected {
            try await exportGATT(device)
            state.connected.withLock { $0 = true }
            state.resolved.withLock { $0 = true }
        }
        var properties = [
            DBusProperty("Address", .string(device.address)), DBusProperty("AddressType", .string(device.addressType)),
            DBusProperty("Alias", .string(device.name ?? device.address.split(separator: ":").joined(separator: "-"))),
            DBusProperty("UUIDs", .strings(device.uuids)),
            DBusProperty("ManufacturerData", .dictionary(keySignature: "q", valueSignature: "v", device.manufacturerData.map {
                DBusDictionaryEntry(key: .uint16($0.key), value: .variant(.bytes($0.value)))
            })),
            DBusProperty("ServiceData", .variantDictionary(device.serviceData.map { ($0.key, .bytes($0.value)) })),
            DBusProperty("Connected", signature: "b", emitsChange: true) { .boolean(state.connected.withLock { $0 }) },
            DBusProperty("ServicesResolved", signature: "b", emitsChange: true) { .boolean(state.resolved.withLock { $0 }) },
        ]
        if let name = device.name { properties.append(DBusProperty("Name", .string(name))) }
        if device.rssi != nil {
            properties.append(DBusProperty("RSSI", signature: "n", emitsChange: true) { .int16(state.rssi.withLock { $0 }) })
        }
        let record = self.record
        let exported = try await bus.export(DBusInterface(
            name: "org.bluez.Device1",
            methods: [
                DBusMethod("Connect") { [weak self] call throws(DBusError) in
                    let attempt = record.connectAttempts.withLock { $0 += 1; return $0 }
                    if attempt <= device.connectFailures {
                        throw device.connectError
                    }
                    guard let self else { return [] }
                    let pending = record.connectsPending.withLock { $0 += 1; return $0 }
                    record.mostConnectsPending.withLock { $0 = max($0, pending) }
                    Task {
                        if device.connectDelay > .zero { try? await Task.sleep(for: device.connectDelay) }
                        record.connectsPending.withLock { $0 -= 1 }
                        state.connected.withLock { $0 = true }
                        if device.emitsConnected {
                            try? await self.bus.emitPropertiesChanged(path: device.path, interface: "org.bluez.Device1",
                                                                      changed: [("Connected", .boolean(true))])
                        }
                        call.reply()
                        guard device.resolvesServices else { return }
                        try? await self.exportGATT(device)
                        state.resolved.withLock { $0 = true }
                        try? await self.bus.emitPropertiesChanged(path: device.path, interface: "org.bluez.Device1",
                                                                  changed: [("ServicesResolved", .boolean(true))])
                    }
                    return nil
                },
                DBusMethod("Disconnect") { [weak self] call in
                    record.disconnects.withLock { $0 += 1 }
                    Task {
                        try? await self?.setConnected(false, device: device)
                        call.reply()
                    }
                    return nil
                },
            ],
            properties: properties), at: device.path)
        registrations.withLock { $0.append(exported) }
        if announce {
            var announced: [(String, DBusValue)] = [("Address", .string(device.address)), ("AddressType", .string(device.addressType)),
                                                    ("UUIDs", .strings(device.uuids))]
            if let name = device.name { announced.append(("Name", .string(name))) }
            if let rssi = device.rssi { announced.append(("RSSI", .int16(rssi))) }
            if !device.manufacturerData.isEmpty {
                announced.append(("ManufacturerData", .dictionary(keySignature: "q", valueSignature: "v", device.manufacturerData.map {
                    DBusDictionaryEntry(key: .uint16($0.key), value: .variant(.bytes($0.value)))
                })))
            }
            if !device.serviceData.isEmpty {
                announced.append(("ServiceData", .variantDictionary(device.serviceData.map { ($0.key, .bytes($0.value)) })))
            }
            try await bus.emitSignal(path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded", arguments: [
                .objectPath(device.path),
                .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                    DBusDictionaryEntry(key: .string("org.bluez.Device1"), value: .variantDictionary(announced)),
                ]),
            ])
        }
    }

    /// Device1.Connected changes (and the signal for it).
    func setConnected(_ connected: Bool, device: Device) async throws {
        states.withLock { $0[device.path] }?.connected.withLock { $0 = connected }
        try await bus.emitPropertiesChanged(path: device.path, interface: "org.bluez.Device1",
                                            changed: [("Connected", .boolean(connected))])
    }

    /// A new RSSI for `device`.
    func setRSSI(_ rssi: Int16, device: Device) async throws {
        states.withLock { $0[device.path] }?.rssi.withLock { $0 = rssi }
        try await bus.emitPropertiesChanged(path: device.path, interface: "org.bluez.Device1", changed: [("RSSI", .int16(rssi))])
    }

    /// Lets the previous notify descriptor go, as bluetoothd does once it saw it close: AcquireNotify is allowed
    /// again and `NotifyAcquired` false is signalled.
    func releaseNotify(device: Device) async throws {
        record.notifyHeld.withLock { $0 = false }
        try await bus.emitPropertiesChanged(path: device.txPath, interface: "org.bluez.GattCharacteristic1",
                                            changed: [("NotifyAcquired", .boolean(false))])
    }

    /// A notification through the D-Bus path (what StartNotify subscribers see).
    func notify(_ value: [UInt8], device: Device) async throws {
        try await bus.emitPropertiesChanged(path: device.txPath, interface: "org.bluez.GattCharacteristic1",
                                            changed: [("Value", .bytes(value))])
    }

    private func exportGATT(_ device: Device) async throws {
        let record = self.record
        var exported = [try await bus.export(DBusInterface(name: "org.bluez.GattService1", properties: [
            DBusProperty("UUID", .string(device.service)), DBusProperty("Device", .objectPath(device.path)),
            DBusProperty("Primary", .boolean(true)),
        ]), at: device.servicePath)]
        if let rx = device.rx {
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.GattCharacteristic1",
                methods: [
                    DBusMethod("AcquireWrite", input: "a{sv}", output: "hq") { _ throws(DBusError) in
                        guard device.rxFlags.contains("write-without-response") else {
                            throw .remote(name: "org.bluez.Error.NotSupported", message: "")
                        }
                        let (mine, theirs) = try Self.socketPair()
                        record.writeEnd.withLock { $0 = mine }
                        return [.unixFD(DBusFileDescriptor(adopting: theirs)), .uint16(device.mtu)]
                    },
                    DBusMethod("WriteValue", input: "aya{sv}") { call in
                        let value = call.arguments[0].bytesValue ?? []
                        let type = call.arguments[1].stringKeyed?["type"]?.stringValue ?? ""
                        _ = try? record.writes.tryPush((value, type))
                        return []
                    },
                ],
                properties: [
                    DBusProperty("UUID", .string(rx)), DBusProperty("Service", .objectPath(device.servicePath)),
                    DBusProperty("Flags", .strings(device.rxFlags)), DBusProperty("MTU", .uint16(device.mtu)),
                ]), at: device.rxPath))
        }
        if let tx = device.tx {
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.GattCharacteristic1",
                methods: [
                    DBusMethod("AcquireNotify", input: "a{sv}", output: "hq") { _ throws(DBusError) in
                        guard device.txFlags.contains("notify") else {
                            throw .remote(name: "org.bluez.Error.NotSupported", message: "")
                        }
                        if record.notifyHeld.withLock({ $0 }) {
                            record.notifyRefusalCount.withLock { $0 += 1 }
                            _ = try? record.notifyRefusals.tryPush(())
                            throw .remote(name: "org.bluez.Error.NotPermitted", message: "Notify acquired")
                        }
                        let (mine, theirs) = try Self.socketPair()
                        record.notifyEnd.withLock { $0 = mine }
                        return [.unixFD(DBusFileDescriptor(adopting: theirs)), .uint16(device.mtu)]
                    },
                    DBusMethod("StartNotify") { _ throws(DBusError) in
                        record.notifyCalls.withLock { $0.append("start") }
                        if let error = record.startNotifyError.withLock({ $0 }) { throw error }
                        record.notifying.withLock { $0 = true }
                        return []
                    },
                    DBusMethod("StopNotify") { _ in
                        record.notifyCalls.withLock { $0.append("stop") }
                        record.notifying.withLock { $0 = false }
                        return []
                    },
                ],
                properties: [
                    DBusProperty("UUID", .string(tx)), DBusProperty("Service", .objectPath(device.servicePath)),
                    DBusProperty("Flags", .strings(device.txFlags)), DBusProperty("MTU", .uint16(device.mtu)),
                ]), at: device.txPath))
        }
        if let psmValue = device.psmValue {
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.GattCharacteristic1",
                methods: [DBusMethod("ReadValue", input: "a{sv}", output: "ay") { _ in [.bytes(psmValue)] }],
                properties: [
                    DBusProperty("UUID", .string("abdd3056-28fa-441d-a470-55a75a52553a")),
                    DBusProperty("Service", .objectPath(device.servicePath)), DBusProperty("Flags", .strings(["read"])),
                ]), at: device.psmPath))
        }
        registrations.withLock { $0.append(contentsOf: exported) }
    }

    private static func socketPair() throws(DBusError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw .system(operation: "socketpair", errno: errno) }
        return (fds[0], fds[1])
    }

    func stop() {
        for registration in registrations.withLock({ $0 }) { registration.cancel() }
        bus.close()
        record.writeEnd.withLock { if let fd = $0.take() { close(fd) } }
        record.notifyEnd.withLock { if let fd = $0.take() { close(fd) } }
    }
}
