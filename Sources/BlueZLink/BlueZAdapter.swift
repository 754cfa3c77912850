public import BluetoothCore
public import SDBus

/// bluetoothd's adapters: the `org.bluez.Adapter1` object an ``AdapterSelector`` means, its devices' paths,
/// and the powered check discovery and the central start with.
public enum BlueZAdapter {
    /// The object path (e.g. /org/bluez/hci0) of the adapter `selector` names: `hciN` directly (whoever uses
    /// it finds out whether it exists), an address by its `Address` property, and the first powered adapter
    /// (else the first one) for `.firstAvailable`. Throws ``BlueZError/adapterNotFound(_:)`` when bluetoothd
    /// has no such adapter.
    public static func path(for selector: AdapterSelector, bus: DBusConnection) async throws(BlueZError) -> String {
        if case let .index(index) = selector { return "/org/bluez/hci\(index)" }
        let objects: [String: [String: [String: DBusValue]]]
        do throws(DBusError) {
            objects = try await bus.managedObjects(destination: "org.bluez", path: "/")
        } catch {
            throw BlueZError(error, calling: "listing bluetoothd's adapters")
        }
        let adapters = objects.compactMap { path, interfaces in
            interfaces["org.bluez.Adapter1"].map { (path: path, properties: $0) }
        }.sorted { $0.path < $1.path }
        switch selector {
        case let .index(index):
            return "/org/bluez/hci\(index)"
        case let .address(address):
            guard let match = adapters.first(where: {
                $0.properties["Address"]?.stringValue?.uppercased() == "\(address)".uppercased()
            }) else { throw .adapterNotFound("\(address)") }
            return match.path
        case .firstAvailable:
            guard let first = adapters.first(where: { $0.properties["Powered"]?.boolValue == true }) ?? adapters.first
            else { throw .adapterNotFound("(any)") }
            return first.path
        }
    }

    /// "hci0" for /org/bluez/hci0.
    public static func name(path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }

    /// The adapter's object path for "hci0" (a path, "/org/...", is returned as is).
    public static func path(_ name: String) -> String {
        name.hasPrefix("/") ? name : "/org/bluez/" + name
    }

    /// The `Device1` path bluetoothd gives `address` under `adapter`: /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF.
    public static func devicePath(adapter: String, address: BluetoothAddress) -> String {
        path(adapter) + "/dev_" + String(address.description.map { $0 == ":" ? "_" : $0 })
    }

    /// The adapter's `Adapter1` properties; throws unless it exists and is powered.
    static func requirePowered(bus: DBusConnection, adapter: String) async throws(BlueZError) -> [String: DBusValue] {
        let properties: [String: DBusValue]
        do throws(DBusError) {
            properties = try await bus.allProperties(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1")
        } catch {
            switch error.name {
            case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
                 "org.freedesktop.DBus.Error.InvalidArgs":
                throw .adapterNotFound(name(path: adapter))
            default:
                throw BlueZError(error, calling: "reading \(adapter)")
            }
        }
        guard properties["Powered"]?.boolValue ?? true else { throw .adapterPoweredOff(name(path: adapter)) }
        return properties
    }
}
