import Backpressure
import SDBus
import Synchronization

/// What a central waits on of one `Device1` (Connected, ServicesResolved), kept current from its
/// `PropertiesChanged` signals (bluetoothd leaving the bus counts as Connected false; ServicesResolved true
/// counts as Connected true); on Connected false it calls the handler given to ``onDisconnect(_:)`` (the
/// link's end). Waiters wake through a one-slot queue: changes coalesce, nothing polls.
final class BlueZDeviceWatch: Sendable {
    struct Snapshot: Sendable, Equatable {
        var connected = false
        var servicesResolved = false
        /// A signal said Connected false after the device was connected.
        var lost = false
    }

    private struct State {
        var snapshot = Snapshot()
        /// Properties a signal set already: the initial GetAll (older) must not overwrite them.
        var signalled: Set<String> = []
        var onDisconnect: (@Sendable (String) -> Void)?
    }

    let device: String
    private let state = Mutex(State())
    private let wake = BoundedAsyncQueue<Void, Never>(capacity: 1)
    private let registration = Mutex<[DBusRegistration]>([])

    private init(device: String) { self.device = device }

    deinit { registration.withLock { for each in $0 { each.cancel() } } }

    /// Watches `device` (its signals first, then its current properties, so no change falls between).
    static func start(bus: DBusConnection, device: String) async throws(BlueZError) -> BlueZDeviceWatch {
        let watch = BlueZDeviceWatch(device: device)
        do throws(DBusError) {
            let registration = try await bus.addMatch(DBusMatchRule(
                sender: "org.bluez", path: device, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", arg0: "org.bluez.Device1")
            ) { [weak watch] signal in
                guard signal.arguments.count >= 2, let changed = signal.arguments[1].stringKeyed else { return }
                watch?.update(changed, fromSignal: true)
            }
            let departure = try await bus.addMatch(.nameOwnerChanged("org.bluez")) { [weak watch] signal in
                guard signal.arguments.count == 3, signal.arguments[2].stringValue == "" else { return }
                watch?.update(["Connected": .boolean(false)], fromSignal: true, reason: "bluetoothd left the D-Bus")
            }
            watch.registration.withLock { $0 = [registration, departure] }
            let current = try await bus.allProperties(destination: "org.bluez", path: device, interface: "org.bluez.Device1")
            watch.update(current, fromSignal: false)
        } catch {
            switch error.name {
            case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface",
                 "org.freedesktop.DBus.Error.InvalidArgs":
                throw .deviceNotFound(BlueZPeripheral.peerAddress(devicePath: device), timeout: .zero)
            default:
                throw BlueZError(error, calling: "reading \(device)")
            }
        }
        return watch
    }

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// `handler` is called with the reason when a signal says Connected false (changes after this call).
    func onDisconnect(_ handler: @escaping @Sendable (String) -> Void) {
        state.withLock { $0.onDisconnect = handler }
    }

    /// Waits until `predicate` holds for the current state, or `deadline` passes or the task is cancelled (nil).
    func wait(until deadline: ContinuousClock.Instant, for predicate: (Snapshot) -> Bool) async -> Snapshot? {
        while true {
            let current = snapshot
            if predicate(current) { return current }
            let remaining = deadline - .now
            guard remaining > .zero, !Task.isCancelled else { return nil }
            let woken: Void? = await withTimeout(remaining) { [wake] in await wake.next() }
            if woken == nil, ContinuousClock.now >= deadline { return predicate(snapshot) ? snapshot : nil }
        }
    }

    func cancel() {
        let registrations = registration.withLock { registrations in defer { registrations = [] }; return registrations }
        for each in registrations { each.cancel() }
    }

    private func update(_ properties: [String: DBusValue], fromSignal: Bool,
                        reason: String = "the peripheral disconnected (Device1.Connected false)") {
        let disconnect = state.withLock { state -> (@Sendable (String) -> Void)? in
            var lost = false
            for (name, value) in properties {
                guard fromSignal || !state.signalled.contains(name), let flag = value.boolValue else { continue }
                if fromSignal { state.signalled.insert(name) }
                switch name {
                case "Connected":
                    lost = lost || (fromSignal && !flag)
                    if fromSignal, !flag, state.snapshot.connected { state.snapshot.lost = true }
                    state.snapshot.connected = flag
                case "ServicesResolved":
                    state.snapshot.servicesResolved = flag
                    // Resolved services mean a connection, whatever Connected said: bluetoothd 5.66 marks an LE
                    // link connected when its ATT socket connects (src/device.c att_connect_cb) without
                    // emitting Connected, and the mgmt Device Connected that follows finds it "already
                    // connected" and emits nothing either: Connected stays false on the bus.
                    if flag { state.snapshot.connected = true }
                default:
                    continue
                }
            }
            return lost ? state.onDisconnect : nil
        }
        disconnect?(reason)
        _ = try? wake.tryPush(())
    }
}
