import ArgumentParser
import BLELink

/// `--backend`: which Bluetooth stack a command drives.
enum BackendChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// bluez when bluetoothd is on the system D-Bus, else kernel.
    case auto
    /// Beside bluetoothd, through its D-Bus API (the stock box).
    case bluez
    /// The kernel's L2CAP ATT channel and mgmt socket directly (no bluetoothd may hold the adapter).
    case kernel
}

/// The Bluetooth stack a command runs on, once chosen.
enum BluetoothBackend: Sendable {
    case kernel
    case bluez(DBusConnection)

    /// Chooses for `choice`: `auto` takes bluez when org.bluez owns a name on the system bus, kernel
    /// otherwise; `bluez` fails with the remedy when bluetoothd cannot be reached.
    static func resolve(_ choice: BackendChoice) async throws(BlueZError) -> BluetoothBackend {
        if choice == .kernel { return .kernel }
        let bus: DBusConnection
        do throws(DBusError) {
            bus = try DBusConnection.system()
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

    /// What `--verbose` prints.
    var summary: String {
        switch self {
        case .kernel: "backend: kernel (L2CAP ATT channel and mgmt socket; bluetoothd must not hold the adapter)"
        case .bluez: "backend: bluez (beside bluetoothd, through its D-Bus API)"
        }
    }
}
