public import Backpressure
import Synchronization

/// Drives a ``GATTServer`` over one ``ATTConnection``: answers requests in order, hands the application its
/// events (backpressured), sends notifications and indications, and enforces the indication timeout.
///
/// Call ``run()`` once; it returns when the client disconnects, breaks the protocol, lets an indication time
/// out, or ``close()`` is called. ``events`` then finishes with ``GATTServerConnection/Event/disconnected(reason:)``.
public final class GATTServerConnection: Sendable {
    /// What the application hears from one connection.
    public enum Event: Sendable, Equatable {
        case server(GATTServerEvent)
        case disconnected(reason: String)
    }

    /// The connection's events in order; while nobody reads them the server stops reading the bearer.
    public let events: BoundedAsyncQueue<Event, Never>
    public let bearer: any ATTConnection
    private let server: Mutex<GATTServer>
    private let clock: ATTClock
    /// One unconfirmed indication at a time: indications take turns for the credit, in order.
    private let indicationCredit = CreditPool.attTransaction()
    private let confirmation = Mutex<ResponseWaiter?>(nil)

    public init(bearer: any ATTConnection, server: GATTServer, eventCapacity: Int = 64, clock: ATTClock = .continuous) {
        self.bearer = bearer
        self.server = Mutex(server)
        self.clock = clock
        events = BoundedAsyncQueue(capacity: eventCapacity)
    }

    /// The ATT_MTU in effect.
    public var mtu: Int { server.withLock { $0.mtu } }

    /// The longest notification or indication value now: min(ATT_MTU - 3, 512).
    public var maximumPushLength: Int { server.withLock { $0.maximumPushLength } }

    /// What the client subscribed to on the characteristic at `valueHandle`.
    public func subscription(valueHandle: UInt16) -> GATTSubscription {
        server.withLock { $0.subscription(valueHandle: valueHandle) }
    }

    /// Replaces the value of a readable attribute for this connection.
    public func setValue(_ value: [UInt8], at handle: UInt16) throws(ATTError) {
        try server.withLock { server throws(ATTError) in try server.setValue(value, at: handle) }
    }

    /// Answers the client until the connection ends.
    public func run() async {
        var reason = "closed"
        loop: while let event = await bearer.receive() {
            switch event {
            case let .disconnected(why):
                reason = why
                break loop
            case let .pdu(pdu):
                if server.withLock({ $0.awaitsSecurity }), let level = bearer.linkSecurity {
                    server.withLock { $0.linkSecured(level) }
                }
                let reaction = server.withLock { $0.receive(pdu[...], now: clock.now()) }
                if let response = reaction.response {
                    do { try await bearer.send(response[...]) } catch {
                        reason = error.description
                        break loop
                    }
                    server.withLock { $0.responseSent() }
                }
                guard let serverEvent = reaction.event else { continue }
                switch serverEvent {
                case let .protocolViolation(message):
                    reason = "protocol violation: \(message)"
                    break loop
                case .indicationConfirmed:
                    confirmation.withLock { $0.take() }?.complete(.success([]))
                default:
                    break
                }
                do { try await events.send(.server(serverEvent)) } catch { break loop }
            }
        }
        bearer.close()
        confirmation.withLock { $0.take() }?.complete(.failure(.disconnected(reason: reason)))
        try? await events.send(.disconnected(reason: reason))
        events.finish()
    }

    /// Sends a notification, suspending while the bearer is not ready. Throws unless the client subscribed
    /// and `value` fits ``maximumPushLength``.
    public func notify(valueHandle: UInt16, value: ArraySlice<UInt8>) async throws(ATTError) {
        var pdu: [UInt8] = []
        try server.withLock { server throws(ATTError) in try server.notification(valueHandle: valueHandle, value: value, into: &pdu) }
        try await bearer.send(pdu[...])
    }

    /// Sends an indication and returns once the client confirmed it; one at a time. Throws
    /// ``ATTError/transactionTimeout(request:)`` (and closes the bearer) after the transaction timeout.
    public func indicate(valueHandle: UInt16, value: ArraySlice<UInt8>) async throws(ATTError) {
        try await indicationCredit.acquireTransaction()
        defer { indicationCredit.release() }
        let waiter = ResponseWaiter(requestOpcode: ATTOpcode.handleValueIndication)
        var pdu: [UInt8] = []
        let now = clock.now()
        let deadline = try server.withLock { server throws(ATTError) -> Duration in
            try server.indication(valueHandle: valueHandle, value: value, now: now, into: &pdu)
            return server.nextTimeout ?? now
        }
        confirmation.withLock { $0 = waiter }
        do { try await bearer.send(pdu[...]) } catch {
            confirmation.withLock { $0 = nil }
            server.withLock { $0.withdrawIndication() }
            throw error
        }
        let clock = clock
        let timer = Task {
            do { try await clock.sleepUntil(deadline) } catch { return }
            if self.server.withLock({ $0.handleTimeout(now: clock.now()) }) != nil {
                waiter.complete(.failure(.transactionTimeout(request: ATTOpcode.handleValueIndication)))
            }
        }
        let result = await waiter.value()
        timer.cancel()
        if case .failure(.transactionTimeout) = result { bearer.close() }
        _ = try result.get()
    }

    /// Disconnects the client.
    public func close() { bearer.close() }
}
