import Glibc
import Synchronization

/// The peripheral role end to end: holds the adapter's ATT channel, advertises, and hands out one connected
/// ATT socket per central. Several centrals may be connected at once: ``nextConnection(maximumConcurrent:until:)``
/// may be called again while earlier connections are live; it advertises (connectable) while fewer than the
/// maximum centrals are linked, stops advertising at the maximum and resumes when one leaves (the kernel's
/// Device Disconnected). Calls block (run them with ``BlockingCall``, or use ``connections(maximumConcurrent:)``)
/// and are serialized.
public final class BLEPeripheral: Sendable {
    public let adapter: BluetoothAdapter
    public let advertisement: Advertisement
    /// The pairing agent while serving with security medium and a ``Pairing`` (nil otherwise).
    public let pairingAgent: PairingAgent?
    private let state: Mutex<State>
    /// Set for good by ``stop()`` and ``stopAdvertising()``: no call advertises after it.
    private let stopped = Atomic<Bool>(false)
    /// With one central at a time: how long to wait for the previous central's link to go down before
    /// advertising again anyway (a central may keep an idle link up without ATT).
    static let disconnectWait: Duration = .seconds(10)

    private struct State: ~Copyable {
        let management: ManagementSocket
        let listener: ATTListener
        /// Centrals handed out whose link is still up.
        var slots = ConnectionSlots()
        /// Whether our advertising instance is installed (the controller pauses it at every connection; the
        /// kernel may resume it by itself, so at the maximum it is removed, not left paused).
        var advertising: Bool
    }

    /// How the peripheral pairs with security medium: where bonds are kept, and who hears about pairing.
    public struct Pairing: Sendable {
        /// The bond store's directory (nil: keys stay in the kernel only, until it restarts).
        public var bondDirectory: String?
        public var onNote: @Sendable (PairingNote) -> Void

        public init(bondDirectory: String? = nil, onNote: @escaping @Sendable (PairingNote) -> Void = { _ in }) {
            self.bondDirectory = bondDirectory
            self.onNote = onNote
        }
    }

    /// Resolves the adapter, checks it is powered with LE, binds the ATT channel (so a busy channel fails
    /// before anything is advertised) and starts advertising. With security medium and `pairing`, first starts
    /// a ``PairingAgent`` on the adapter (bondable, NoInputNoOutput, the stored bonds loaded), which answers
    /// Just Works pairing until this peripheral goes away; a corrupt bond file throws
    /// ``BluetoothError/bondStore(_:)`` before anything is advertised.
    public init(
        adapter selector: AdapterSelector, advertisement: Advertisement, security: L2CAPSecurityLevel = .low,
        pairing: Pairing? = nil
    ) throws(BluetoothError) {
        let management = try ManagementSocket()
        let adapter = try BluetoothAdapter.resolve(selector, using: management)
        try adapter.requireReadyForLowEnergy()
        let listener = try ATTListener(adapter: adapter, security: security)
        var agent: PairingAgent?
        if security != .medium, let directory = pairing?.bondDirectory {
            pairing?.onNote(PairingNote(.warning, """
                bonds in \(directory) are kept with security medium only; with \(security.rawValue) no pairing \
                agent runs and no bond is loaded or kept
                """))
        }
        if security == .medium, let pairing {
            agent = try PairingAgent(
                adapter: adapter, store: pairing.bondDirectory.map { BondStore(directory: $0, adapter: adapter.address) },
                onNote: pairing.onNote)
        }
        do {
            try Advertiser.start(advertisement, on: adapter, using: management)
        } catch {
            agent?.stop()
            throw error
        }
        self.adapter = adapter
        self.advertisement = advertisement
        self.pairingAgent = agent
        self.state = Mutex(State(management: management, listener: listener, advertising: true))
    }

    deinit { pairingAgent?.stop() }

    /// Waits for the next central (nil deadline: forever); nil when the deadline passes first.
    ///
    /// At most `maximumConcurrent` centrals handed out by this peripheral are linked at once: while that many
    /// are, it does not advertise and waits for one's link to go down; below it, it advertises (again, after
    /// a connection paused it) and accepts. A central that connected anyway (in the moment before advertising
    /// was removed) is handed out rather than left unanswered in the backlog. With the default of 1 this is the sequential peripheral: it waits
    /// (at most ``disconnectWait``) for the previous central's link to drop before advertising again.
    public func nextConnection(
        maximumConcurrent: Int = 1, until deadline: Deadline? = nil
    ) throws(BluetoothError) -> L2CAPConnection? {
        guard maximumConcurrent >= 1 else {
            throw .invalidArgument("the maximum of concurrent centrals must be at least 1, not \(maximumConcurrent)")
        }
        return try state.withLock { (state: inout State) throws(BluetoothError) -> L2CAPConnection? in
            switch try Self.waitForRoom(&state, maximum: maximumConcurrent, adapter: adapter, until: deadline) {
            case .timedOut:
                return nil
            case .room:
                if !state.advertising {
                    guard !stopped.load(ordering: .sequentiallyConsistent) else { return nil }
                    let current = try BluetoothAdapter.resolve(.index(adapter.index), using: state.management)
                    try Advertiser.start(advertisement, on: current, using: state.management)
                    state.advertising = true
                    // A stop from another thread while this one added the instance: its removal may have come
                    // first (the flag is set before it removes), so this call removes it.
                    if stopped.load(ordering: .sequentiallyConsistent) {
                        _ = try? Advertiser.stop(advertisement, on: adapter, using: state.management)
                        state.advertising = false
                        return nil
                    }
                }
            case .waiting:
                break  // a central is already waiting to be accepted: serve it, do not advertise for more
            }
            guard let connection = try state.listener.accept(until: deadline) else { return nil }
            state.slots.taken(by: connection.peer)
            // The controller paused advertising for this connection; below the maximum the next call
            // re-adds it, at the maximum it is removed so that the kernel does not resume it by itself.
            if !state.slots.hasRoom(maximum: maximumConcurrent) {
                _ = try? Advertiser.stop(advertisement, on: adapter, using: state.management)
            }
            state.advertising = false
            return connection
        }
    }

    /// ``stop()`` from any thread, also while another waits in ``nextConnection(maximumConcurrent:until:)``
    /// holding the peripheral's lock: removes the instance through a management socket of its own, and a
    /// call that is about to advertise again does not (or removes what it just added). Nothing is left
    /// advertising once this returns and no call is between its add and its check.
    public func stopAdvertising() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        if let management = try? ManagementSocket() {
            _ = try? Advertiser.stop(advertisement, on: adapter, using: management)
        }
    }

    /// How many centrals handed out are linked now, as far as the last call saw.
    public var linkedCentrals: Int { state.withLock { $0.slots.count } }

    /// Stops advertising for good: a later ``nextConnection(maximumConcurrent:until:)`` that would advertise
    /// returns nil instead (the listener closes when this object goes away).
    public func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        state.withLock { state in
            _ = try? Advertiser.stop(advertisement, on: adapter, using: state.management)
            state.advertising = false
        }
    }

    private enum Room { case room, waiting, timedOut }

    /// Frees the slots of centrals whose link went down, then, while `maximum` are linked, waits (on the
    /// management socket's Device Disconnected events and on the listener, never by polling) until one
    /// leaves (`.room`) or a connection is already waiting to be accepted (`.waiting`: a central that got in
    /// before advertising was removed must not sit unanswered in the backlog).
    /// `.timedOut` when `deadline` passed first. (A central reconnecting over its still lingering link gets
    /// no new ATT channel here: the kernel makes the fixed channel once per link.)
    private static func waitForRoom(
        _ state: inout State, maximum: Int, adapter: BluetoothAdapter, until deadline: Deadline?
    ) throws(BluetoothError) -> Room {
        guard state.slots.count > 0 else { return .room }
        // Events queued since the last call are older than the list that follows: drop them, then ask.
        while try state.management.nextEvent(until: .after(.zero)) != nil {}
        let linksUp = try decodeConnectionList(try state.management.execute(.getConnections(adapter.index))[...])
        state.slots.keepOnly(linksUp: linksUp)
        let giveUp = maximum == 1 ? Deadline.after(disconnectWait) : nil
        let until = [deadline, giveUp].compactMap { $0 }.min()
        while !state.slots.hasRoom(maximum: maximum) {
            if !state.management.hasBufferedEvents {
                var waits = [
                    pollfd(fd: state.listener.descriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: state.management.descriptor, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&waits, 2, until?.remainingMilliseconds ?? -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw bluetoothError("poll", errno: errno)
                }
                if ready == 0 {
                    if let deadline, deadline.hasPassed { return .timedOut }
                    state.slots.removeAll()  // the sequential peripheral's previous central kept an idle link
                    return .room
                }
                if waits[0].revents != 0 { return .waiting }
            }
            if let event = try state.management.nextEvent(until: .after(.zero)),
                event.controllerIndex == adapter.index, case let .deviceDisconnected(gone, _) = event.kind
            {
                state.slots.linkDown(gone)
            }
        }
        return .room
    }
}

extension BLEPeripheral {
    /// The centrals as they connect, each an ATT socket owned by the receiver (see ``ConnectedATTSocket``),
    /// at most `maximumConcurrent` linked at once: iterate it and serve each element in a task of its own.
    /// Each `next()` runs ``nextConnection(maximumConcurrent:until:)`` on a thread of its own.
    public func connections(maximumConcurrent: Int) -> Connections {
        Connections(peripheral: self, maximumConcurrent: maximumConcurrent)
    }

    /// An endless sequence of accepted centrals; it throws when accepting fails.
    public struct Connections: AsyncSequence, Sendable {
        public typealias Element = ConnectedATTSocket
        public typealias Failure = BluetoothError
        let peripheral: BLEPeripheral
        let maximumConcurrent: Int

        public func makeAsyncIterator() -> Iterator {
            Iterator(peripheral: peripheral, maximumConcurrent: maximumConcurrent)
        }

        public struct Iterator: AsyncIteratorProtocol {
            let peripheral: BLEPeripheral
            let maximumConcurrent: Int

            public mutating func next() async throws(BluetoothError) -> ConnectedATTSocket? {
                let (peripheral, maximum) = (peripheral, maximumConcurrent)
                return try await BlockingCall.run { () throws(BluetoothError) in
                    try peripheral.nextConnection(maximumConcurrent: maximum)?.handOver()
                }
            }
        }
    }
}
