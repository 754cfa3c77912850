public import Backpressure
public import Transport
import Synchronization

/// Transport's ``Link`` over GATT: as peripheral the link sends with notifications on TX (indications, one
/// confirmed at a time, if the central enabled only those) and receives the central's writes to RX; as
/// central it sends with Write Commands to RX and receives TX notifications (it enables indications too
/// where TX offers them, so the peripheral can confirm a packet with ``sendConfirmed(_:)``).
///
/// Packets are at most min(ATT_MTU - 3, 512) bytes (a notification or Write Command value is an attribute
/// value). Sends suspend while the bearer is not ready (its socket said EAGAIN), events are backpressured
/// down to the socket. One link serves one connection at a time and may be given the next after
/// `.disconnected` (``serve(_:info:configuration:clock:)`` or ``connect(_:mtu:clock:)``).
///
/// ```swift
/// let link = GATTLink(profile: .msgpipe)
/// try await link.connect(bearer)     // central; bearer: any ATTConnection, e.g. BLESocket's ATTBearer
/// let transport = Transport(link: link)
/// try await transport.send(Array("hello".utf8))
/// ```
public final class GATTLink: Link, Sendable {
    public let events: BoundedAsyncQueue<LinkEvent, Never>
    public let profile: GATTServiceProfile

    private enum Connection {
        case peripheral(GATTServerConnection, tx: UInt16)
        case central(GATTClient, rx: UInt16)
    }

    private struct State {
        var connection: Connection?
        var connected = false
        var closed = false
        var peerInfo: MsgPipeServiceInfo?
        /// As central: the channel PSM the peer's service published at the last connect.
        var peerPSM: UInt16?
        /// As central: the largest packet the server takes (its info characteristic may name less than the
        /// ATT_MTU allows).
        var writeLimit = Int.max
        /// As central: TX and what its CCCD enables (written again by ``renewIncoming()``).
        var subscription: (characteristic: GATTRemoteCharacteristic, enabling: GATTSubscription)?
        /// Counts connections, so a teardown resumes only the waiters of its own connection.
        var generation: UInt64 = 0
        /// Callers of ``disconnect()`` waiting for a connection (by generation) to be torn down.
        var detachWaiters: [(generation: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init(profile: GATTServiceProfile = .msgpipe, eventCapacity: Int = 64) {
        self.profile = profile
        events = BoundedAsyncQueue(capacity: eventCapacity)
    }

    /// The peripheral's info characteristic as the central read it, if the profile has one.
    public var peerInfo: MsgPipeServiceInfo? { state.withLock { $0.peerInfo } }

    /// The PSM of the LE credit-based channel the peripheral's service published at the last connect (nil: none).
    public var peerPSM: UInt16? { state.withLock { $0.peerPSM } }

    // MARK: - Peripheral

    /// Serves the profile's service to the central on `bearer` until it disconnects. The link is connected
    /// once the central subscribes to TX; its writes to RX become packets.
    public func serve(_ bearer: any ATTConnection, info: MsgPipeServiceInfo,
                      configuration: GATTServer.Configuration = .init(), clock: ATTClock = .continuous) async {
        let database = profile.makeDatabase(info: info)
        guard let rx = database.valueHandle(of: profile.rx), let tx = database.valueHandle(of: profile.tx),
              attach(.peripheral(GATTServerConnection(
                  bearer: bearer, server: GATTServer(database: database, configuration: configuration), clock: clock),
                  tx: tx)) else {
            bearer.close()
            return
        }
        guard case let .peripheral(connection, _)? = state.withLock({ $0.connection }) else { return }
        let running = Task { await connection.run() }
        var reason = "the central disconnected"
        do throws(ATTError) {
            for await event in connection.events {
                switch event {
                case let .server(.write(handle, value, _)) where handle == rx:
                    try await events.send(.packet(value))
                case let .server(.preparedWritesExecuted(writes)):
                    for write in writes where write.handle == rx { try await events.send(.packet(write.value)) }
                case let .server(.subscriptionChanged(handle, subscription)) where handle == tx:
                    if !subscription.isEmpty, markConnected() {
                        try await events.send(.connected(maximumPacketSize: connection.maximumPushLength))
                    }
                case let .server(.mtuExchanged(mtu)):
                    if state.withLock({ $0.connected }) {
                        try await events.send(.maximumPacketSizeChanged(ATTOpcode.maximumValueLength(mtu: mtu)))
                    }
                case let .disconnected(why):
                    reason = why
                default:
                    continue
                }
            }
        } catch {
            connection.close()
        }
        await running.value
        await detach(reason: reason)
    }

    // MARK: - Central

    /// Sets up the central on `bearer`: MTU exchange, discovery of the profile's service, RX and TX, the
    /// info characteristic (if any), and the TX subscription; then the link is connected.
    ///
    /// `takeChannel` is asked, when the service publishes a channel PSM (its ``GATTServiceProfile/channelPSM``
    /// characteristic, else the info characteristic's), whether the data goes over that channel instead: on
    /// true TX is left unsubscribed and the link reports nothing for this connection (no `.connected`, no
    /// `.disconnected`); it only holds the bearer until ``disconnect()``.
    public func connect(
        _ bearer: any ATTConnection, mtu: Int = ATTOpcode.maximumMTU, clock: ATTClock = .continuous,
        takeChannel: (_ psm: UInt16) async -> Bool = { _ in false }
    ) async throws(ATTError) {
        let client = GATTClient(bearer: bearer, clock: clock)
        do throws(ATTError) {
            try await client.exchangeMTU(mtu)
            let service = try await client.discoverPrimaryService(profile.service)
            let characteristics = try await client.discoverCharacteristics(of: service)
            guard let rx = characteristics.first(where: { $0.uuid == profile.rx }) else { throw ATTError.notFound(profile.rx) }
            guard let tx = characteristics.first(where: { $0.uuid == profile.tx }) else { throw ATTError.notFound(profile.tx) }
            var info: MsgPipeServiceInfo?
            if let infoUUID = profile.info, let characteristic = characteristics.first(where: { $0.uuid == infoUUID }) {
                info = try? MsgPipeServiceInfo(decoding: try await client.read(characteristic.valueHandle))
            }
            var psm = info?.psm
            if let characteristic = characteristics.first(where: { $0.uuid == GATTServiceProfile.channelPSM }),
               let value = try? await client.read(characteristic.valueHandle),
               let published = GATTServiceProfile.channelPSM(fromValue: value) {
                psm = published
            }
            state.withLock { $0.peerPSM = psm }
            if let psm, await takeChannel(psm) {
                guard attach(.central(client, rx: rx.valueHandle)) else { throw ATTError.closed }
                state.withLock { $0.peerInfo = info }
                Task {
                    for await _ in client.notifications {}
                    await self.detach(reason: client.failure?.description ?? "the peripheral disconnected")
                }
                return
            }
            // Notifications carry the data; where TX can also indicate, indications are enabled as well, so
            // the peripheral can end a plain transfer with a confirmed packet (``sendConfirmed(_:)``).
            let indicates = tx.properties.contains(.indicate) && tx.properties.contains(.notify)
            let subscription: GATTSubscription = indicates ? [.notifications, .indications] : .notifications
            try await client.subscribe(to: tx, enabling: subscription)
            guard attach(.central(client, rx: rx.valueHandle)) else { throw ATTError.closed }
            // A server that names a smaller ATT_MTU in its info characteristic takes no longer values (msgpipe
            // beside bluetoothd before 5.69 says 513: longer writes are dropped there, PROTOCOL.md 5.2).
            let serverLimit = info.map { max(ATTOpcode.defaultMTU, Int($0.serverMTU)) - 3 } ?? .max
            let packetSize = min(client.maximumWriteCommandLength, serverLimit)
            state.withLock { state in
                state.peerInfo = info
                state.writeLimit = packetSize
                state.subscription = (tx, subscription)
            }
            _ = markConnected()
            try await events.send(.connected(maximumPacketSize: packetSize))
            let txHandle = tx.valueHandle
            Task {
                do throws(ATTError) {
                    for await notification in client.notifications where notification.handle == txHandle {
                        try await events.send(.packet(notification.value))
                    }
                } catch {
                    client.close()
                }
                await self.detach(reason: client.failure?.description ?? "the peripheral disconnected")
            }
        } catch {
            client.close()
            throw error
        }
    }

    // MARK: - Link

    public func send(_ packet: [UInt8]) async throws {
        let connection = try currentConnection()
        if case .central = connection {
            let limit = state.withLock { $0.writeLimit }
            guard packet.count <= limit else { throw LinkError.packetTooLarge(size: packet.count, limit: limit) }
        }
        do throws(ATTError) {
            switch connection {
            case let .peripheral(server, tx):
                if server.subscription(valueHandle: tx) == .indications {
                    try await server.indicate(valueHandle: tx, value: packet[...])  // the central asked for nothing else
                } else {
                    try await server.notify(valueHandle: tx, value: packet[...])
                }
            case let .central(client, rx):
                try await client.writeWithoutResponse(packet[...], to: rx)
            }
        } catch {
            throw linkError(error)
        }
    }

    /// As central: writes TX's CCCD off, then on again, when Transport finds the peer silent (a peripheral's
    /// bluetoothd 5.78+ can lose this central's subscription while the link stays up, BlueZ issue #1452; it
    /// acquires a new notify descriptor from its application at the second write; that one is written even when
    /// the first failed). A failed write is left to the bearer, which reports its own end, and to Transport's
    /// retries. As peripheral: nothing.
    public func renewIncoming() async {
        let current = state.withLock { state -> (GATTClient, GATTRemoteCharacteristic, GATTSubscription)? in
            guard case let .central(client, _)? = state.connection, let subscription = state.subscription else { return nil }
            return (client, subscription.characteristic, subscription.enabling)
        }
        guard let (client, tx, subscription) = current else { return }
        try? await client.subscribe(to: tx, enabling: [])
        try? await client.subscribe(to: tx, enabling: subscription)
    }

    /// Sends one packet and returns once the peer's ATT layer took it: as central with a Write Request
    /// (the Write Response confirms it), as peripheral with an indication (the confirmation does; the central
    /// must have subscribed to indications; a notify-only central cannot confirm, ``canConfirm``, and then it
    /// is ``send(_:)``). Plain framing formats, which have no acknowledgements of their own, end a transfer
    /// with it.
    public func sendConfirmed(_ packet: [UInt8]) async throws {
        let connection = try currentConnection()
        if case let .peripheral(server, tx) = connection, !server.subscription(valueHandle: tx).contains(.indications) {
            return try await send(packet)
        }
        do throws(ATTError) {
            switch connection {
            case let .peripheral(server, tx):
                try await server.indicate(valueHandle: tx, value: packet[...])
            case let .central(client, rx):
                try await client.write(packet, to: rx)
            }
        } catch {
            throw linkError(error)
        }
    }

    /// True when ``sendConfirmed(_:)`` can confirm on the current connection: as central always, as
    /// peripheral when the central enabled indications on TX (a notify-only TX cannot confirm).
    public var canConfirm: Bool {
        switch state.withLock({ $0.connection }) {
        case let .peripheral(server, tx)?: server.subscription(valueHandle: tx).contains(.indications)
        case .central?: true
        case nil: false
        }
    }

    /// The ATT bearer of the current connection (nil: none), for what only its backend can read of it, such
    /// as the connection's PHY.
    public var bearer: (any ATTConnection)? {
        switch state.withLock({ $0.connection }) {
        case let .peripheral(server, _)?: server.bearer
        case let .central(client, _)?: client.bearer
        case nil: nil
        }
    }

    private func currentConnection() throws(LinkError) -> Connection {
        try state.withLock { state throws(LinkError) -> Connection in
            if state.closed { throw .closed }
            guard let connection = state.connection, state.connected else { throw .notConnected }
            return connection
        }
    }

    public func close() async {
        let connection = state.withLock { state in
            state.closed = true
            state.connected = false
            return state.connection.take()
        }
        connection.map(Self.drop)
        events.finish()
        resumeDetachWaiters(upTo: .max)
    }

    /// Drops the current connection (the peer sees a disconnect) and returns once this side has reported
    /// `.disconnected`; the link stays open for the next ``serve(_:info:configuration:clock:)`` or
    /// ``connect(_:mtu:clock:)``. Returns at once without a connection.
    public func disconnect() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let connection = state.withLock { state -> Connection? in
                guard let connection = state.connection else { return nil }
                state.detachWaiters.append((state.generation, continuation))
                return connection
            }
            guard let connection else { return continuation.resume() }
            Self.drop(connection)
        }
    }

    private static func drop(_ connection: Connection) {
        switch connection {
        case let .peripheral(server, _): server.close()
        case let .central(client, _): client.close()
        }
    }

    private func resumeDetachWaiters(upTo generation: UInt64) {
        let waiters = state.withLock { state in
            defer { state.detachWaiters.removeAll { $0.generation <= generation } }
            return state.detachWaiters.filter { $0.generation <= generation }
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    // MARK: - State

    private func attach(_ connection: Connection) -> Bool {
        state.withLock { state in
            guard !state.closed, state.connection == nil else { return false }
            state.generation += 1
            state.connection = connection
            state.connected = false
            return true
        }
    }

    /// Marks the link connected; true if it was not before.
    private func markConnected() -> Bool {
        state.withLock { state in
            defer { state.connected = true }
            return !state.connected && state.connection != nil
        }
    }

    private func detach(reason: String) async {
        let (wasConnected, generation) = state.withLock { state in
            defer {
                state.connection = nil
                state.subscription = nil
                state.connected = false
            }
            return (state.connected, state.generation)
        }
        if wasConnected { try? await events.send(.disconnected(reason: reason)) }
        resumeDetachWaiters(upTo: generation)
    }

    private func linkError(_ error: ATTError) -> any Error {
        switch error {
        case .cancelled: return CancellationError()
        case .closed: return state.withLock { $0.closed } ? LinkError.closed : LinkError.disconnected(reason: "bearer closed")
        case let .disconnected(reason): return LinkError.disconnected(reason: reason)
        case .notSubscribed: return LinkError.notConnected
        case let .valueTooLong(length, limit): return LinkError.packetTooLarge(size: length, limit: limit)
        default: return LinkError.io(error.description)
        }
    }
}
