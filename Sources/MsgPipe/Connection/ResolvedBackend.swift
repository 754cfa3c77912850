public import BlueZLink
public import SDBus

/// The Bluetooth stack a pipe runs on, once `PipeBackend` was resolved (``PipeStacks`` resolves it, and
/// decides what kernel options mean there).
public enum ResolvedBackend: Sendable {
    case kernel
    /// bluetoothd, reached over this system-bus connection (owned by whoever resolved it).
    case bluez(DBusConnection)

    /// Resolves `choice`: `auto` takes bluez when org.bluez owns a name on the bus, kernel otherwise; `bluez`
    /// throws when bluetoothd cannot be reached (the error names the remedy). `busAddress`: the D-Bus address
    /// where bluetoothd runs (nil: the system bus, which DBUS_SYSTEM_BUS_ADDRESS may name).
    public static func resolve(_ choice: PipeBackend.Name, busAddress: String? = nil) async throws(BlueZError) -> ResolvedBackend {
        if choice == .kernel { return .kernel }
        let bus: DBusConnection
        do throws(DBusError) {
            if let busAddress {
                bus = try DBusConnection(address: busAddress)
            } else {
                bus = try DBusConnection.system()
            }
        } catch {
            if choice == .auto { return .kernel }
            throw .dbus(error)
        }
        let running: Bool
        do throws(DBusError) {
            running = try await bus.nameHasOwner("org.bluez")
        } catch {
            bus.close()
            if choice == .auto { return .kernel }
            throw BlueZError(error, calling: "asking the system bus for org.bluez")
        }
        guard running else {
            bus.close()
            if choice == .auto { return .kernel }
            throw .notRunning
        }
        return .bluez(bus)
    }

    /// One line naming the backend, for a verbose log.
    public var summary: String {
        switch self {
        case .kernel: "backend: kernel (L2CAP ATT channel and mgmt socket; bluetoothd must not hold the adapter)"
        case .bluez: "backend: bluez (beside bluetoothd, through its D-Bus API)"
        }
    }
}
