/// Paths and checks of a bluetoothd adapter (`org.bluez.Adapter1`) and its devices, shared by discovery and
/// the central.
public enum BlueZAdapter {
    /// The adapter's object path: "/org/bluez/hci0" for "hci0"; a path ("/org/...") is returned as is.
    public static func path(_ name: String) -> String {
        name.hasPrefix("/") ? name : "/org/bluez/" + name
    }

    /// The `Device1` path bluetoothd gives `address` under `adapter`: /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF.
    public static func devicePath(adapter: String, address: BluetoothAddress) -> String {
        path(adapter) + "/dev_" + address.description.replacingColons()
    }

    /// The object path of the adapter `selector` names, as `--adapter` does for the kernel backend: hciN, its
    /// address, or the first powered adapter bluetoothd knows. Throws unless it exists and is powered.
    public static func resolve(_ selector: AdapterSelector, bus: DBusConnection) async throws(BlueZError) -> String {
        if case let .index(index) = selector {
            let adapter = path("hci\(index)")
            _ = try await requirePowered(bus: bus, adapter: adapter)
            return adapter
        }
        let objects: [String: [String: [String: DBusValue]]]
        do throws(DBusError) {
            objects = try await bus.managedObjects(destination: "org.bluez", path: "/")
        } catch {
            throw BlueZError(error, calling: "GetManagedObjects")
        }
        let adapters = objects.compactMap { path, interfaces in interfaces["org.bluez.Adapter1"].map { (path, $0) } }
            .sorted { $0.0 < $1.0 }
        let candidates = adapters.filter { _, properties in
            guard case let .address(address) = selector else { return true }
            return properties["Address"]?.stringValue.flatMap { BluetoothAddress($0) } == address
        }
        guard let first = candidates.first else {
            throw .adapterNotFound(selector == .firstAvailable ? "(any)" : selector.description)
        }
        guard let powered = candidates.first(where: { $0.1["Powered"]?.boolValue ?? true }) else {
            throw .adapterPoweredOff(name(first.0))
        }
        return powered.0
    }

    /// The adapter's name ("hci0") in its path.
    public static func name(_ adapter: String) -> String { String(adapter.split(separator: "/").last ?? Substring(adapter)) }

    /// The adapter's `Adapter1` properties; throws unless it exists and is powered.
    static func requirePowered(bus: DBusConnection, adapter: String) async throws(BlueZError) -> [String: DBusValue] {
        let properties: [String: DBusValue]
        do throws(DBusError) {
            properties = try await bus.allProperties(destination: "org.bluez", path: adapter, interface: "org.bluez.Adapter1")
        } catch {
            switch error.name {
            case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
                 "org.freedesktop.DBus.Error.InvalidArgs":
                throw .adapterNotFound(name(adapter))
            default:
                throw BlueZError(error, calling: "reading \(adapter)")
            }
        }
        guard properties["Powered"]?.boolValue ?? true else { throw .adapterPoweredOff(name(adapter)) }
        return properties
    }
}

extension String {
    fileprivate func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
