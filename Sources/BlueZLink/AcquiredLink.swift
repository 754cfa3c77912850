import BLESocket
public import Backpressure
import GATT
import Synchronization
public import Transport

/// Transport's ``Link`` over the two SEQPACKET descriptors BlueZ's `AcquireWrite` / `AcquireNotify` hand out:
/// one datagram is one characteristic value. A peripheral receives on the write descriptor and sends on the
/// notify one, a central the other way round; each runs on a ``BearerCore``, so a send waits for readiness.
/// Carries one connection: `.connected`, packets, then `.disconnected` when a descriptor hangs up or
/// ``disconnect(reason:)`` is called, after which `events` finishes. A half that comes later is attached with
/// ``attach(sending:)`` / ``attach(receiving:)``; a send waits until there is a descriptor to send on.
/// A subscription lost while the device stays connected (BlueZ issue #1452) is survived: a peripheral's link
/// made with `keepsConnectionWithoutSender` waits for a new notify descriptor, and a central's link made with
/// `resubscribe` acquires a new one when Transport finds the peer silent (``renewIncoming()``).
public final class AcquiredLink: Link, Sendable {
    public let events: BoundedAsyncQueue<LinkEvent, Never>
    public let maximumPacketSize: Int
    private let eventCapacity: Int

    private struct Halves {
        var sender: BearerCore?
        var receiver: BearerCore?
        var ended = false
        /// A ``renewIncoming()`` is under way (the receiving half is being replaced).
        var renewing = false
    }

    /// Why a descriptor's hang-up matters.
    private enum HangUp {
        /// That descriptor had been replaced already.
        case replaced
        /// The sending descriptor of a link that lives on without it.
        case senderLost
        /// The connection ends.
        case ended
    }

    private let halves = Mutex(Halves())
    /// A send finds no sending descriptor ("not now") until one is attached ("ready"), or the link ends.
    private let senderAttached = ReadinessGate()
    /// Run once when the connection ends (``whenEnded(_:)``).
    private let endHandlers = Mutex<[@Sendable () -> Void]>([])
    /// The sending descriptor hanging up while the receiving one is attached does not end the connection.
    private let keepsConnectionWithoutSender: Bool
    /// Called when that happened.
    private let onSenderLost: (@Sendable () -> Void)?
    /// A new receiving descriptor, acquired after the current one was closed (``renewIncoming()``).
    private let resubscribe: (@Sendable () async throws -> Int32)?
    /// Whether the last renewal brought a packet.
    private let renewals = RenewalWatch()

    /// The largest value to send for an acquired `mtu`. bluetoothd cuts a notification silently at
    /// ATT_MTU - 3, or ATT_MTU - 5 when the peer enabled Multiple Handle Value Notifications (BlueZ centrals
    /// do; doc/org.bluez.GattCharacteristic.rst and src/gatt-database.c, see /work/shared/BLUEZ-DBUS.md), so
    /// we always leave 5 bytes, and never more than an attribute value's 512.
    public static func maximumPacketSize(mtu: Int) -> Int {
        min(ATTOpcode.maximumValueLength(mtu: ATTOpcode.maximumMTU), max(23, min(mtu, ATTOpcode.maximumMTU)) - 5)
    }

    /// Takes ownership of `sending` and `receiving` (connected SEQPACKET sockets; at least one of them) and
    /// reports `.connected`. `keepsConnectionWithoutSender` (a peripheral's link) lets the connection outlive
    /// its sending descriptor while the receiving one is attached, calling `onSenderLost`; `resubscribe` (a
    /// central's link) is how ``renewIncoming()`` gets a new receiving descriptor.
    public init(sending: Int32?, receiving: Int32?, maximumPacketSize: Int, eventCapacity: Int = 64,
                keepsConnectionWithoutSender: Bool = false, onSenderLost: (@Sendable () -> Void)? = nil,
                resubscribe: (@Sendable () async throws -> Int32)? = nil) throws(LinkError) {
        self.keepsConnectionWithoutSender = keepsConnectionWithoutSender
        self.onSenderLost = onSenderLost
        self.resubscribe = resubscribe
        self.maximumPacketSize = maximumPacketSize
        self.eventCapacity = max(2, eventCapacity)
        events = BoundedAsyncQueue(capacity: self.eventCapacity)
        guard sending != nil || receiving != nil else { throw .misuse("an acquired link needs a descriptor") }
        _ = try? events.pushIgnoringCapacity(.connected(maximumPacketSize: maximumPacketSize))
        do throws(LinkError) {
            if let sending { try attach(sending: sending) }
            if let receiving { try attach(receiving: receiving) }
        } catch {
            disconnect(reason: "\(error)")
            throw error
        }
    }

    deinit {
        let (sender, receiver) = halves.withLock { ($0.sender, $0.receiver) }
        sender?.close()
        receiver?.close()
    }

    /// Takes ownership of `descriptor` as the one to send on (replacing an earlier one); waiting sends go on.
    public func attach(sending descriptor: Int32) throws(LinkError) {
        let core = try start(descriptor, receiveCapacity: 4)
        guard install(core, asSender: true) else { return }
        senderAttached.signalReady()
        // Nothing is expected from the peer here but the hang-up (BlueZ 5.80+ writes 0x01 per indication
        // confirmation into a notify descriptor: ignored).
        Task { [weak self] in
            while let event = await core.receive() {
                if case let .disconnected(reason) = event {
                    self?.halfEnded(core, reason: reason)
                    return
                }
            }
        }
    }

    /// Takes ownership of `descriptor` as the one to receive on (replacing an earlier one).
    public func attach(receiving descriptor: Int32) throws(LinkError) {
        let core = try start(descriptor, receiveCapacity: max(1, eventCapacity / 2))
        guard install(core, asSender: false) else { return }
        // One pump per descriptor for the life of the connection (not per packet).
        Task { [weak self] in
            while let event = await core.receive() {
                switch event {
                case let .pdu(value):
                    guard let self else { return }
                    self.renewals.packetArrived()
                    do { try await self.events.push(.packet(value)) } catch { return }
                case let .disconnected(reason):
                    self?.halfEnded(core, reason: reason)
                    return
                }
            }
        }
    }

    private func start(_ descriptor: Int32, receiveCapacity: Int) throws(LinkError) -> BearerCore {
        do throws(ATTError) {
            let core = try BearerCore(fd: descriptor, receiveCapacity: receiveCapacity)
            try core.start()
            return core
        } catch {
            throw .io("starting the acquired link: \(error)")
        }
    }

    /// Puts `core` in place of the sending or receiving half and closes the half it replaces; false (and
    /// `core` closed) when the link has ended.
    private func install(_ core: BearerCore, asSender: Bool) -> Bool {
        let (installed, replaced) = halves.withLock { halves -> (Bool, BearerCore?) in
            guard !halves.ended else { return (false, nil) }
            let replaced = asSender ? halves.sender : halves.receiver
            if asSender { halves.sender = core } else { halves.receiver = core }
            return (true, replaced)
        }
        replaced?.close()
        if !installed { core.close() }
        return installed
    }

    /// A descriptor hung up: the connection ends, unless that descriptor was replaced already, or it was the
    /// sending one of a link that keeps its connection without it.
    private func halfEnded(_ core: BearerCore, reason: String) {
        let hangUp = halves.withLock { halves -> HangUp in
            if halves.sender === core {
                guard keepsConnectionWithoutSender, halves.receiver != nil, !halves.ended else { return .ended }
                halves.sender = nil
                return .senderLost
            }
            return halves.receiver === core ? .ended : .replaced
        }
        switch hangUp {
        case .replaced:
            break
        case .senderLost:
            core.close()
            onSenderLost?()
        case .ended:
            disconnect(reason: reason)
        }
    }

    /// A central's renewal: closes the receiving descriptor (bluetoothd then unsubscribes at the peer), gets a
    /// new one from `resubscribe` (it subscribes again) and receives on it. The connection ends if that fails,
    /// or instead of a renewal when the last one brought no packet (`RenewalWatch`). Nothing happens without
    /// `resubscribe`, on an ended link, or while a renewal runs.
    public func renewIncoming() async {
        guard let resubscribe else { return }
        if renewals.lastRenewalWasFruitless {
            disconnect(reason: RenewalWatch.fruitlessReason)
            return
        }
        let old = halves.withLock { halves -> BearerCore?? in
            guard !halves.ended, !halves.renewing else { return nil }
            halves.renewing = true
            defer { halves.receiver = nil }
            return .some(halves.receiver)
        }
        guard let old else { return }
        defer { halves.withLock { $0.renewing = false } }
        old?.close()
        do {
            try attach(receiving: try await resubscribe())
            renewals.renewed()
        } catch {
            disconnect(reason: "subscribing again failed: \(error)")
        }
    }

    /// True once the connection ended (either side hung up, or ``disconnect(reason:)``).
    var hasEnded: Bool { halves.withLock { $0.ended } }

    /// Ends the connection: `.disconnected(reason)` after what was received, then `events` finishes.
    public func disconnect(reason: String) {
        let ended = halves.withLock { halves -> (BearerCore?, BearerCore?)? in
            guard !halves.ended else { return nil }
            halves.ended = true
            defer { (halves.sender, halves.receiver) = (nil, nil) }
            return (halves.sender, halves.receiver)
        }
        guard let (sender, receiver) = ended else { return }
        sender?.close()
        receiver?.close()
        senderAttached.fail(LinkError.disconnected(reason: "the acquired descriptors are closed"))
        _ = try? events.pushIgnoringCapacity(.disconnected(reason: reason))
        events.finish()
        for handler in endHandlers.withLock({ handlers in defer { handlers.removeAll() }; return handlers }) { handler() }
    }

    /// Runs `body` once the connection ended (at once if it has).
    func whenEnded(_ body: @escaping @Sendable () -> Void) {
        let now = halves.withLock { halves in
            if !halves.ended { endHandlers.withLock { $0.append(body) } }
            return halves.ended
        }
        if now { body() }
    }

    public func send(_ packet: [UInt8]) async throws {
        guard packet.count <= maximumPacketSize else {
            throw LinkError.packetTooLarge(size: packet.count, limit: maximumPacketSize)
        }
        while true {
            let sender = try await attachedSender()
            do {
                try await sender.send(packet[...])
                return
            } catch {
                // The descriptor went away but the connection lives on: the packet waits for the next one.
                if halves.withLock({ !$0.ended && $0.sender !== sender }) { continue }
                switch error {
                case .cancelled: throw CancellationError()
                case .closed: throw LinkError.disconnected(reason: "the acquired descriptors are closed")
                case let .disconnected(reason): throw LinkError.disconnected(reason: reason)
                default: throw LinkError.io("\(error)")
                }
            }
        }
    }

    /// The descriptor to send on: at once in the usual case (no gate turn per packet); until the central
    /// subscribed (a peripheral's notify descriptor), the wait on ``senderAttached``; its failure once the
    /// link ended.
    private func attachedSender() async throws -> BearerCore {
        if let sender = halves.withLock({ $0.sender }) { return sender }
        var sender: BearerCore?
        try await senderAttached.send {
            sender = halves.withLock { $0.sender }
            return sender != nil
        }
        guard let sender else { throw LinkError.disconnected(reason: "the acquired descriptors are closed") }
        return sender
    }

    public func close() async {
        disconnect(reason: "closed locally")
    }
}
