import CSystemd
import Synchronization

/// Something registered on a ``DBusConnection`` (an exported interface, an object manager, a signal match):
/// it stays until ``cancel()`` or until this value is released.
public final class DBusRegistration: Sendable {
    private let connection: DBusConnection
    private let slot: Mutex<BusPointer?>

    init(connection: DBusConnection, slot: OpaquePointer) {
        self.connection = connection
        self.slot = Mutex(BusPointer(pointer: slot))
    }

    deinit { cancel() }

    /// Unregisters (on the bus thread). Idempotent.
    public func cancel() {
        guard let slot = slot.withLock({ $0.take() }) else { return }
        connection.enqueueHousekeeping { sd_bus_slot_unref(slot.pointer) }
    }
}
