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
            var waiters: [CheckedContinuation<Void, Never>] = []
            let next = state.withLock { state -> (on: Bool, generation: Int)? in
                guard !state.stopped, state.registered, state.advertised != state.advertise else {
                    waiters = state.endChanging()
                    return nil
                }
                return (state.advertise, state.generation)
            }
            guard let next else {
                for waiter in waiters { waiter.resume() }
                return
            }
            do throws(DBusError) {
                try await callAdvertising(next.on)
            } catch {
                let (stopped, waiters) = state.withLock { state in (state.stopped || state.withdrawing, state.endChanging()) }
                for waiter in waiters { waiter.resume() }
                // Stopped meanwhile: the call failed because its bus went away, which is no advertising failure.
                guard !stopped else { return }
                let call = next.on ? "registering the advertisement again" : "taking the advertisement away"
                onEvent(.advertisingFailed(BlueZError(error, calling: call).description))
                return
            }
            let withdrawing = state.withLock { state -> Bool in
                if state.generation == next.generation { state.advertised = next.on }
                return state.withdrawing
            }
            if !withdrawing { onEvent(.advertising(next.on)) }
        }
    }

    /// Takes the advertisement away for good, before the caller stops and unexports it: a change in flight (a
    /// turn that just ended registers it again) completes first, then `UnregisterAdvertisement`. Why: bluetoothd
    /// 5.66 that reads an advertisement object while it is unexported keeps an empty instance on the adapter after
    /// we left. Waits at most `bound`.
    func withdrawAdvertising(within bound: Duration) async {
        let id = state.withLock { state -> Int in
            state.withdrawing = true
            state.nextWaiter += 1
            return state.nextWaiter
        }
        setAdvertising(false)
        let timer = Task { [self] in
            try? await Task.sleep(for: bound)
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.settledWaiters.removeValue(forKey: id) else {
                    state.expiredWaiters.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let settled = state.withLock { state -> Bool in
                guard state.changingAdvertising, state.expiredWaiters.remove(id) == nil else { return true }
                state.settledWaiters[id] = continuation
                return false
            }
            if settled { continuation.resume() }
        }
        timer.cancel()
    }
}
