import Glibc
import PollThread
import Synchronization

/// The kernel backend's pairing agent for one adapter while a peripheral serves with security medium: sets
/// NoInputNoOutput, bondable and LE Secure Connections (legacy pairing stays accepted), loads the stored keys
/// (a bonded phone encrypts again), answers Just Works confirmations (``PairingPolicy``) and stores the keys
/// the kernel hands over. ``stop()`` undoes what it turned on. Needs CAP_NET_ADMIN.
///
/// ```swift
/// let agent = try PairingAgent(adapter: adapter, store: BondStore(directory: dir, adapter: adapter.address)) { print($0) }
/// defer { agent.stop() }
/// ```
public final class PairingAgent: Sendable {
    public let adapter: BluetoothAdapter
    public let store: BondStore?
    private let onNote: @Sendable (PairingNote) -> Void
    private let state: Mutex<State>
    private let wake: WakePipe
    private let descriptor: Int32
    private let wasBondable: Bool
    /// Whether the agent turned Secure Connections on (and turns it off at stop).
    private let enabledSecureConnections: Bool

    private struct State: ~Copyable {
        /// Owned by the agent's thread, which closes it when it ends (so its descriptor is never reused under a poll).
        var management: ManagementSocket?
        var policy: PairingPolicy
        var stopped = false
    }

    /// Loads the store (a corrupt file throws ``BluetoothError/bondStore(_:)`` and is left as it is), sets up
    /// the adapter and starts answering. `store` nil: keys are not kept on disk.
    public init(
        adapter: BluetoothAdapter, store: BondStore?, onNote: @escaping @Sendable (PairingNote) -> Void = { _ in }
    ) throws(BluetoothError) {
        let bonds: BondFile?
        do {
            bonds = try store?.load()
        } catch {
            throw .bondStore(error)
        }
        let management = try ManagementSocket()
        let info = try ControllerInfo(decoding: try management.execute(.readControllerInfo(adapter.index))[...])
        try management.execute(SetIOCapability(.noInputNoOutput).command(adapter.index))
        try management.execute(SetBondable(true).command(adapter.index))
        var enabledSecureConnections = false
        if info.supportedSettings.contains(.secureConnections), !info.currentSettings.contains(.secureConnections) {
            do {
                try management.execute(SetSecureConnections(mode: 1).command(adapter.index))
                enabledSecureConnections = true
            } catch {
                onNote(PairingNote(.detail, "\(adapter.name): LE Secure Connections stay off (\(error)): pairing is legacy"))
            }
        }
        if let bonds {
            let ltks = bonds.longTermKeys.filter(\.isLoadable)
            let irks = bonds.identityResolvingKeys.filter(\.isLoadable)
            try management.execute(LoadLongTermKeys(keys: ltks).command(adapter.index))
            try management.execute(LoadIdentityResolvingKeys(keys: irks).command(adapter.index))
            if !bonds.peers.isEmpty {
                onNote(PairingNote(.detail, """
                    loaded \(ltks.count) LTKs and \(irks.count) IRKs of \(bonds.peers.count) bonded peers from \(store?.path ?? "")
                    """))
            }
        }
        let wake: WakePipe
        do {
            wake = try WakePipe()
        } catch {
            throw .system(call: "pipe", errno: error.errno, message: "cannot create the pairing agent's wake pipe")
        }
        self.adapter = adapter
        self.store = store
        self.onNote = onNote
        self.wake = wake
        self.descriptor = management.descriptor
        self.wasBondable = info.currentSettings.contains(.bondable)
        self.enabledSecureConnections = enabledSecureConnections
        self.state = Mutex(State(
            management: management, policy: PairingPolicy(adapterIndex: adapter.index, adapterName: adapter.name, bonds: bonds)))
        let status = DetachedThread.spawn { [self] in run() }
        guard status == 0 else {
            throw .system(call: "pthread_create", errno: status, message: "cannot start the pairing agent's thread")
        }
    }

    /// The bonds as the agent keeps them now (nil without a store).
    public var bonds: BondFile? { state.withLock { $0.policy.bonds } }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Stops answering (the thread ends and closes its socket) and turns bondable and Secure Connections off
    /// again where the agent turned them on. Idempotent.
    public func stop() {
        let running = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard running else { return }
        wake.wake()
        guard !wasBondable || enabledSecureConnections, let management = try? ManagementSocket() else { return }
        if !wasBondable { _ = try? management.execute(SetBondable(false).command(adapter.index)) }
        if enabledSecureConnections { _ = try? management.execute(SetSecureConnections(mode: 0).command(adapter.index)) }
    }

    private func run() {
        defer {
            state.withLock { $0.management = nil }
            wake.close()
        }
        while true {
            guard let buffered = state.withLock({ $0.stopped ? nil : $0.management?.hasBufferedEvents }) else { return }
            if !buffered {
                switch wake.wait(for: descriptor) {
                case let .failed(code):
                    onNote(PairingNote(.warning, "the pairing agent of \(adapter.name) stopped: poll failed (errno \(code))"))
                    return
                case .woken: wake.drain()
                case .events: break
                }
            }
            let handled = state.withLock { (state: inout State) -> (notes: [PairingNote], failed: Bool)? in
                guard !state.stopped, let management = state.management else { return nil }
                return Self.handlePending(management, &state.policy, store: store)
            }
            guard let handled else { return }
            for note in handled.notes { onNote(note) }
            if handled.failed {
                onNote(PairingNote(.warning, "the pairing agent of \(adapter.name) stopped: pairing requests go unanswered"))
                return
            }
        }
    }

    /// Handles the events that are there now; returns the notes to pass on, and whether the socket failed.
    private static func handlePending(
        _ management: ManagementSocket, _ policy: inout PairingPolicy, store: BondStore?
    ) -> (notes: [PairingNote], failed: Bool) {
        var notes: [PairingNote] = []
        while true {
            let event: ManagementEvent?
            do {
                event = try management.nextEvent(until: .after(.zero))
            } catch .malformedManagementPacket(let reason) {
                notes.append(PairingNote(.detail, "pairing agent: an event it cannot decode: \(reason)"))
                continue  // that packet was read: go on with the next
            } catch {
                notes.append(PairingNote(.warning, "pairing agent: \(error)"))
                return (notes, true)
            }
            guard let event else { return (notes, false) }
            for action in policy.handle(event) {
                switch action {
                case let .reply(reply):
                    do {
                        try management.execute(reply.command(policy.adapterIndex), timeout: .seconds(2))
                    } catch {
                        // Another agent (bluetoothd, a lab helper) may have answered first: the pairing goes on.
                        notes.append(PairingNote(.detail, "answering \(reply.peer)'s confirmation request: \(error)"))
                    }
                case let .store(key):
                    guard let store else { continue }
                    do {
                        var bonds = try store.load()  // the file may have changed (msgpipe bonds remove)
                        if bonds.insert(key) { try store.save(bonds) }
                        policy.reload(bonds)
                    } catch {
                        notes.append(PairingNote(.warning, "\(error); the bond holds only until the kernel restarts"))
                    }
                case let .note(note):
                    notes.append(note)
                }
            }
        }
    }
}
