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

    /// The adapter's name ("hci0") in its path.
    static func name(_ adapter: String) -> String { String(adapter.split(separator: "/").last ?? Substring(adapter)) }

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
