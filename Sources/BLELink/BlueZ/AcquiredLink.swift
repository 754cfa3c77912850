public import Backpressure
import GATT
import Synchronization
public import Transport

/// Transport's ``Link`` over the two SEQPACKET descriptors BlueZ's `AcquireWrite` / `AcquireNotify` hand
/// out: one datagram is one characteristic value. The peripheral receives on the write descriptor and sends
/// on the notify one; a central the other way round. Each descriptor runs on a ``BearerCore`` (its poll
/// thread, Backpressure's ReadinessGate for sends, a bounded inbox for reads): no second socket loop.
///
/// Carries exactly one connection: `.connected` first, then packets, then `.disconnected` when either
/// descriptor hangs up (or ``disconnect(reason:)`` is called, e.g. on Device1.Connected false), after which
/// `events` finishes.
public final class AcquiredLink: Link, Sendable {
    public let events: BoundedAsyncQueue<LinkEvent, Never>
    public let maximumPacketSize: Int
    private let sender: BearerCore
    private let receiver: BearerCore
    private let ended = Mutex(false)
    /// Run once when the connection ends (``whenEnded(_:)``).
    private let endHandlers = Mutex<[@Sendable () -> Void]>([])

    /// The largest value to send for an acquired `mtu`. bluetoothd cuts a notification silently at
    /// ATT_MTU - 3, or ATT_MTU - 5 when the peer enabled Multiple Handle Value Notifications (BlueZ centrals
    /// do; doc/org.bluez.GattCharacteristic.rst and src/gatt-database.c, see /work/shared/BLUEZ-DBUS.md), so
    /// we always leave 5 bytes, and never more than an attribute value's 512.
    public static func maximumPacketSize(mtu: Int) -> Int {
        min(ATTOpcode.maximumValueLength(mtu: ATTOpcode.maximumMTU), max(23, min(mtu, ATTOpcode.maximumMTU)) - 5)
    }

    /// Takes ownership of `sending` and `receiving` (connected SEQPACKET sockets) and reports `.connected`.
    public init(sending: Int32, receiving: Int32, maximumPacketSize: Int, eventCapacity: Int = 64) throws(LinkError) {
        self.maximumPacketSize = maximumPacketSize
        events = BoundedAsyncQueue(capacity: max(2, eventCapacity))
        do throws(ATTError) {
            sender = try BearerCore(fd: sending, receiveCapacity: 4)
            receiver = try BearerCore(fd: receiving, receiveCapacity: max(1, eventCapacity / 2))
            try sender.start()
            try receiver.start()
        } catch {
            throw .io("starting the acquired link: \(error)")
        }
        _ = try? events.pushIgnoringCapacity(.connected(maximumPacketSize: maximumPacketSize))
        // One pump per descriptor for the life of the connection (not per packet).
        Task { [receiver, weak self] in
            while let event = await receiver.receive() {
                switch event {
                case let .pdu(value):
                    guard let self else { return }
                    do { try await self.events.push(.packet(value)) } catch { return }
                case let .disconnected(reason):
                    self?.disconnect(reason: reason)
                    return
                }
            }
        }
        Task { [sender, weak self] in
            // Nothing is expected from the peer here but the hang-up (BlueZ 5.80+ writes 0x01 per indication
            // confirmation into a notify descriptor: ignored).
            while let event = await sender.receive() {
                if case let .disconnected(reason) = event {
                    self?.disconnect(reason: reason)
                    return
                }
            }
        }
    }

    deinit {
        sender.close()
        receiver.close()
    }

    /// True once the connection ended (either side hung up, or ``disconnect(reason:)``).
    var hasEnded: Bool { ended.withLock { $0 } }

    /// Ends the connection: `.disconnected(reason)` after what was received, then `events` finishes.
    public func disconnect(reason: String) {
        guard ended.withLock({ ended in defer { ended = true }; return !ended }) else { return }
        sender.close()
        receiver.close()
        _ = try? events.pushIgnoringCapacity(.disconnected(reason: reason))
        events.finish()
        for handler in endHandlers.withLock({ handlers in defer { handlers.removeAll() }; return handlers }) { handler() }
    }

    /// Runs `body` once the connection ended (at once if it has).
    func whenEnded(_ body: @escaping @Sendable () -> Void) {
        let now = ended.withLock { ended in
            if !ended { endHandlers.withLock { $0.append(body) } }
            return ended
        }
        if now { body() }
    }

    public func send(_ packet: [UInt8]) async throws {
        guard packet.count <= maximumPacketSize else {
            throw LinkError.packetTooLarge(size: packet.count, limit: maximumPacketSize)
        }
        if ended.withLock({ $0 }) { throw LinkError.disconnected(reason: "the acquired descriptors are closed") }
        do {
            try await sender.send(packet[...])
        } catch .cancelled {
            throw CancellationError()
        } catch .closed {
            throw LinkError.disconnected(reason: "the acquired descriptors are closed")
        } catch let .disconnected(reason) {
            throw LinkError.disconnected(reason: reason)
        } catch {
            throw LinkError.io("\(error)")
        }
    }

    public func close() async {
        disconnect(reason: "closed locally")
    }
}
