import SDBus

/// The advertisement, registered while it is wanted: one central at a time takes it away while a central is
/// served (``CentralTurns``) and brings it back when the turn ends.
extension BlueZRegistration {
    /// `RegisterAdvertisement` (`on`) or `UnregisterAdvertisement` with bluetoothd; AlreadyExists and
    /// DoesNotExist mean it already is as asked.
    func callAdvertising(_ on: Bool) async throws(DBusError) {
        do throws(DBusError) {
            _ = try await bus.call(
                destination: "org.bluez", path: adapter, interface: "org.bluez.LEAdvertisingManager1",
                member: on ? "RegisterAdvertisement" : "UnregisterAdvertisement",
                arguments: on ? [.objectPath(advertisementPath), .variantDictionary([])] : [.objectPath(advertisementPath)])
        } catch where error.name == (on ? "org.bluez.Error.AlreadyExists" : "org.bluez.Error.DoesNotExist") {}
    }

    /// Wants the advertisement registered (`on`) or not, and brings bluetoothd there: one call at a time, in
    /// a task, while the application is registered (a registration attempt registers it as wanted).
    func setAdvertising(_ on: Bool) {
        let start = state.withLock { state -> Bool in
            state.advertise = on
            guard !state.changingAdvertising, !state.stopped, state.registered, state.advertised != on else { return false }
            state.changingAdvertising = true
            return true
        }
        if start { Task { await self.changeAdvertising() } }
    }

    private func changeAdvertising() async {
        while true {
            let next = state.withLock { state -> (on: Bool, generation: Int)? in
                guard !state.stopped, state.registered, state.advertised != state.advertise else {
                    state.changingAdvertising = false
                    return nil
                }
                return (state.advertise, state.generation)
            }
            guard let next else { return }
            do throws(DBusError) {
                try await callAdvertising(next.on)
            } catch {
                let stopped = state.withLock { state -> Bool in
                    state.changingAdvertising = false
                    return state.stopped
                }
                // Stopped meanwhile: the call failed because its bus went away, which is no advertising failure.
                guard !stopped else { return }
                let call = next.on ? "registering the advertisement again" : "taking the advertisement away"
                onEvent(.advertisingFailed(BlueZError(error, calling: call).description))
                return
            }
            state.withLock { state in
                if state.generation == next.generation { state.advertised = next.on }
            }
            onEvent(.advertising(next.on))
        }
    }
}
