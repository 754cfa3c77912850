/// bluetoothd's adapters: the `org.bluez.Adapter1` object an ``AdapterSelector`` means.
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
}
