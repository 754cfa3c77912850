import SDBus
import Synchronization

/// The application and advertisement registered with whoever owns org.bluez, kept so across bluetoothd
/// restarts: when bluetoothd leaves, the registration is forgotten (``bluetoothdLeft()``); when a new one
/// takes the name or adds our adapter's managers, the same objects are registered again
/// (``registerAgain()``), one attempt at a time, each result an event. Whether the advertisement is wanted
/// (one central at a time withdraws it) lives here too, because each registration brings it back as wanted
/// (BlueZRegistration+Advertising.swift).
final class BlueZRegistration: Sendable {
    struct State {
        var registered = false
        var attempting = false
        /// Something happened during an attempt (the adapter appeared) that calls for one more.
        var again = false
        /// Bumped whenever bluetoothd leaves: an attempt that started earlier did not register with the new one.
        var generation = 0
        var stopped = false
        /// Whether the advertisement should be registered (false while one central at a time is served) and
        /// whether it is; a change in flight is `changingAdvertising`.
        var advertise = true
        var advertised = false
        var changingAdvertising = false
        /// Taking the advertisement away for good (``withdrawAdvertising(within:)``): no events for it.
        var withdrawing = false
        /// Who waits for the change in flight to end, and the waits that timed out before they were kept.
        var settledWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var expiredWaiters: Set<Int> = []
        var nextWaiter = 0

        /// No change in flight any more: the waiters to resume (outside the lock).
        mutating func endChanging() -> [CheckedContinuation<Void, Never>] {
            changingAdvertising = false
            defer { settledWaiters.removeAll() }
            return Array(settledWaiters.values)
        }
    }

    let state = Mutex(State())
    let bus: DBusConnection
    let adapter: String
    let advertisementPath: String
    let onEvent: @Sendable (BlueZPeripheral.Event) -> Void
    /// Registers the application (and the agent) with whoever owns org.bluez now.
    private let register: @Sendable () async throws(DBusError) -> Void

    init(bus: DBusConnection, adapter: String, advertisementPath: String,
         onEvent: @escaping @Sendable (BlueZPeripheral.Event) -> Void,
         register: @escaping @Sendable () async throws(DBusError) -> Void) {
        self.bus = bus
        self.adapter = adapter
        self.advertisementPath = advertisementPath
        self.onEvent = onEvent
        self.register = register
    }

    /// The first registration, at start: the application, then the advertisement. Throws what bluetoothd
    /// answered; the caller stops.
    func registerFirst() async throws(DBusError) {
        let generation = state.withLock { state in
            state.attempting = true
            return state.generation
        }
        do throws(DBusError) {
            try await register()
            try await callAdvertising(true)
            state.withLock { $0.advertised = true }
        } catch {
            state.withLock { $0.attempting = false }
            throw error
        }
        finishAttempt(generation: generation, failure: nil)
    }

    /// Marks the registration stopped; true for the first call.
    func stop() -> Bool {
        state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
    }

    /// bluetoothd left the bus: the application and advertisement are gone with it.
    func bluetoothdLeft() {
        state.withLock { state in
            state.registered = false
            state.advertised = false
            state.advertise = true
            state.generation += 1
        }
    }

    /// org.bluez has an owner again, or our adapter appeared: registers the same objects again (one attempt
    /// at a time, in a task: the bus thread must not wait for the bus).
    func registerAgain() {
        let generation = state.withLock { state -> Int? in
            guard !state.stopped, !state.registered else { return nil }
            guard !state.attempting else {
                state.again = true
                return nil
            }
            state.attempting = true
            state.again = false
            return state.generation
        }
        guard let generation else { return }
        Task { [self] in
            do throws(DBusError) {
                try await register()
                let advertise = state.withLock { $0.advertise }
                if advertise { try await callAdvertising(true) }
                state.withLock { state in
                    if state.generation == generation { state.advertised = advertise }
                }
                finishAttempt(generation: generation, failure: nil)
            } catch {
                switch error.name {
                case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
                     "org.freedesktop.DBus.Error.UnknownInterface":
                    // The adapter or its managers are not back yet: their InterfacesAdded starts the next attempt.
                    finishAttempt(generation: generation, failure: nil, notYet: true)
                default:
                    finishAttempt(generation: generation, failure: BlueZError(error, calling: "registering again").description)
                }
            }
        }
    }

    /// Ends an attempt: registered when it succeeded with the bluetoothd of `generation`; another attempt
    /// when something happened meanwhile; else the failure is reported (`notYet`: bluetoothd's adapter is not
    /// complete yet, nothing to report: the next InterfacesAdded tries again).
    private func finishAttempt(generation: Int, failure: String?, notYet: Bool = false) {
        enum Next { case registered, retry, failed, quiet }
        let next = state.withLock { state -> Next in
            state.attempting = false
            if state.stopped { return .quiet }
            if notYet { return state.again || state.generation != generation ? .retry : .quiet }
            if failure == nil, state.generation == generation {
                state.registered = true
                return generation == 0 ? .quiet : .registered
            }
            if state.again || state.generation != generation { return .retry }
            return .failed
        }
        switch next {
        case .registered: onEvent(.registeredAgain)
        case .retry: registerAgain()
        case .failed: onEvent(.registrationFailed(failure ?? "bluetoothd left during the registration"))
        case .quiet: break
        }
        // A central's turn may have begun or ended during the attempt.
        setAdvertising(state.withLock { $0.advertise })
    }
}
