public import Backpressure
public import GATT
import Glibc
import Synchronization

/// A msgpipe peripheral beside bluetoothd: registers a GATT application for `profile`
/// (`GattManager1.RegisterApplication`) and an advertisement (`LEAdvertisingManager1.RegisterAdvertisement`),
/// answers `AcquireWrite`/`AcquireNotify` with socketpairs, and yields one ``AcquiredLink`` per connected
/// device once it holds both descriptors (the notify one says the central subscribed).
public final class BlueZPeripheral: Sendable {
    /// One accepted central.
    public struct Connection: Sendable {
        public let link: AcquiredLink
        /// The central's address, "AA:BB:CC:DD:EE:FF".
        public let peer: String
        /// Its Device1 object path.
        public let device: String
    }

    private struct Pending {
        var write: Int32?
        var notify: Int32?
        var mtu = 23
    }

    /// Accepted connections, bounded: a full queue refuses the next acquire with org.bluez.Error.Failed.
    public let connections: BoundedAsyncQueue<Connection, Never>
    private let pending = Mutex<[String: Pending]>([:])
    private let registrations = Mutex<[DBusRegistration]>([])
    /// Links handed out, by device path, so Device1.Connected false ends the right one.
    private let links = Mutex<[String: AcquiredLink]>([:])

    private init(capacity: Int) { connections = BoundedAsyncQueue(capacity: capacity) }

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
    /// `adapter` (an object path such as /org/bluez/hci0).
    public static func start(
        bus: DBusConnection, adapter: String = "/org/bluez/hci0", profile: GATTServiceProfile, info: MsgPipeServiceInfo,
        localName: String, root: String = "/org/msgpipe", backlog: Int = 8
    ) async throws(BlueZError) -> BlueZPeripheral {
        let peripheral = BlueZPeripheral(capacity: max(1, backlog))
        let app = root + "/app"
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
        do throws(DBusError) {
            var exported = [try await bus.addObjectManager(at: app)]
            exported.append(try await bus.addMatch(
                .propertiesChanged(sender: "org.bluez", pathNamespace: adapter, interface: "org.bluez.Device1")
            ) { [weak peripheral] signal in
                guard signal.arguments.count >= 2, signal.arguments[1].stringKeyed?["Connected"] == .boolean(false),
                      let link = peripheral?.links.withLock({ $0.removeValue(forKey: signal.path) }) else { return }
                link.disconnect(reason: "the central disconnected (Device1.Connected false)")
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
                    DBusProperty("Flags", .strings(["write", "write-without-response"])),
                    DBusProperty("WriteAcquired", .boolean(false)),
                ]), at: service + "/char0"))
            let txFlags = (profile.txProperties.contains(.notify) ? ["notify"] : [])
                + (profile.txProperties.contains(.indicate) ? ["indicate"] : [])
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
                    DBusProperty("Flags", .strings(txFlags)), DBusProperty("NotifyAcquired", .boolean(false)),
                ]), at: service + "/char1"))
            if let infoUUID = profile.info {
                let value = info.bytes
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
                        DBusProperty("UUID", .string(infoUUID.description)), DBusProperty("Service", .objectPath(service)),
                        DBusProperty("Flags", .strings(["read"])),
                    ]), at: service + "/char2"))
            }
            let advertisement = root + "/advertisement0"
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.LEAdvertisement1", methods: [DBusMethod("Release") { _ in [] }],
                properties: [
                    DBusProperty("Type", .string("peripheral")), DBusProperty("LocalName", .string(localName)),
                    DBusProperty("ServiceUUIDs", .strings([profile.service.description])),
                ]), at: advertisement))
            peripheral.registrations.withLock { $0 = exported }
            _ = try await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.GattManager1",
                                   member: "RegisterApplication", arguments: [.objectPath(app), .variantDictionary([])])
            _ = try await bus.call(destination: "org.bluez", path: adapter, interface: "org.bluez.LEAdvertisingManager1",
                                   member: "RegisterAdvertisement",
                                   arguments: [.objectPath(advertisement), .variantDictionary([])])
        } catch {
            peripheral.stop()
            throw BlueZError(error, calling: "registering the GATT application on \(adapter)")
        }
        return peripheral
    }

    /// Unexports everything (bluetoothd drops the application) and ends the connection sequence.
    public func stop() {
        for registration in registrations.withLock({ $0 }) { registration.cancel() }
        let left = pending.withLock { pending in defer { pending.removeAll() }; return pending.values }
        for entry in left { for fd in [entry.write, entry.notify].compactMap({ $0 }) { Glibc.close(fd) } }
        connections.finish()
    }

    /// AcquireWrite / AcquireNotify({device, mtu, link}): a SEQPACKET socketpair, one end to bluetoothd.
    private func acquire(_ call: DBusMethodCall, notify: Bool) throws(DBusError) -> [DBusValue] {
        guard let options = call.arguments.first?.stringKeyed, let device = options["device"]?.stringValue else {
            throw .invalidArguments("no device option")
        }
        let mtu = Int(options["mtu"]?.uint16Value ?? 23)
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw .system(operation: "socketpair", errno: errno) }
        let ready = pending.withLock { pending -> Pending? in
            var entry = pending[device] ?? Pending()
            if notify {
                if let old = entry.notify { Glibc.close(old) }
                entry.notify = fds[0]
                entry.mtu = mtu
            } else {
                if let old = entry.write { Glibc.close(old) }
                entry.write = fds[0]
            }
            guard entry.write != nil, entry.notify != nil else {
                pending[device] = entry
                return nil
            }
            pending[device] = nil
            return entry
        }
        if let ready, let write = ready.write, let notifyFD = ready.notify {
            do {
                let link = try AcquiredLink(sending: notifyFD, receiving: write,
                                            maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: ready.mtu))
                links.withLock { $0[device] = link }
                guard try connections.tryPush(Connection(link: link, peer: Self.peerAddress(devicePath: device), device: device)) else {
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
        }
        return [.unixFD(DBusFileDescriptor(adopting: fds[1])), .uint16(UInt16(clamping: mtu))]
    }
}
