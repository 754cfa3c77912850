public import Backpressure
public import SDBus
import Synchronization
public import Transport

/// Transport's ``Link`` over D-Bus method calls, the central's fallback for a peer whose characteristics
/// cannot be acquired (no write-without-response, or indicate only): each packet is one
/// `WriteValue(value, {type: "command"})` (a Write Command; `"request"` when the peer only allows Write
/// Requests, so a refused write fails the send rather than vanishing) awaited in turn, and notifications
/// arrive as `StartNotify` + `PropertiesChanged(Value)` signals. One D-Bus round trip per packet: slower than
/// ``AcquiredLink``.
///
/// bluetoothd emits notifications without backpressure; they queue here up to `capacity` and beyond that are
/// dropped and counted (``droppedNotifications``): Transport's window keeps them below it and its
/// retransmission recovers any that were. Carries one connection, as ``AcquiredLink`` does.
public final class BlueZValueLink: Link, Sendable {
    /// The ATT write each packet becomes: `WriteValue`'s "type" option.
    public enum WriteType: String, Sendable {
        /// Write Command (write without response).
        case command
        /// Write Request, answered by the peer.
        case request
    }

    public let events: BoundedAsyncQueue<LinkEvent, Never>
    public let maximumPacketSize: Int
    /// The write characteristic's object path.
    public let writePath: String
    /// The notify characteristic's object path.
    public let notifyPath: String
    public let writeType: WriteType
    private let bus: DBusConnection
    private let state = Mutex(State())
    /// Whether the last renewal brought a notification.
    private let renewals = RenewalWatch()

    private struct State {
        var ended = false
        var closed = false
        var renewing = false
        var dropped = 0
        var subscription: DBusRegistration?
    }

    /// Notifications dropped because the consumer was `capacity` behind.
    public var droppedNotifications: Int { state.withLock { $0.dropped } }

    private init(bus: DBusConnection, write: String, notify: String, writeType: WriteType, maximumPacketSize: Int,
                 capacity: Int) {
        self.bus = bus
        self.writeType = writeType
        writePath = write
        notifyPath = notify
        self.maximumPacketSize = maximumPacketSize
        events = BoundedAsyncQueue(capacity: max(2, capacity))
    }

    deinit {
        state.withLock { $0.subscription?.cancel() }
    }

    /// Subscribes to `notify` (a GattCharacteristic1 path of org.bluez) and reports `.connected`; packets up to
    /// `maximumPacketSize` are written to `write`.
    public static func start(
        bus: DBusConnection, write: String, notify: String, maximumPacketSize: Int, writeType: WriteType = .command,
        capacity: Int = 256
    ) async throws(BlueZError) -> BlueZValueLink {
        let link = BlueZValueLink(bus: bus, write: write, notify: notify, writeType: writeType,
                                  maximumPacketSize: maximumPacketSize, capacity: capacity)
        do throws(DBusError) {
            let subscription = try await bus.addMatch(DBusMatchRule(
                sender: "org.bluez", path: notify, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", arg0: "org.bluez.GattCharacteristic1")
            ) { [weak link] signal in
                guard signal.arguments.count >= 2, let value = signal.arguments[1].stringKeyed?["Value"]?.bytesValue else { return }
                link?.received(value)
            }
            link.state.withLock { $0.subscription = subscription }
            _ = try await bus.call(destination: "org.bluez", path: notify, interface: "org.bluez.GattCharacteristic1",
                                   member: "StartNotify")
        } catch {
            throw BlueZError(error, calling: "GattCharacteristic1.StartNotify on \(notify)")
        }
        _ = try? link.events.pushIgnoringCapacity(.connected(maximumPacketSize: maximumPacketSize))
        return link
    }

    /// A notification's value (at most an attribute's 512 bytes; a longer one is not from bluetoothd).
    private func received(_ value: [UInt8]) {
        guard value.count <= 512, !state.withLock({ $0.ended }) else { return }
        renewals.packetArrived()
        let accepted = (try? events.tryPush(.packet(value))) ?? true
        if !accepted { state.withLock { $0.dropped += 1 } }
    }

    /// Ends the connection: `.disconnected(reason)` after what was received, then `events` finishes.
    public func disconnect(reason: String) {
        let subscription = state.withLock { state -> DBusRegistration?? in
            guard !state.ended else { return nil }
            state.ended = true
            defer { state.subscription = nil }
            return .some(state.subscription)
        }
        guard let subscription else { return }
        subscription?.cancel()
        _ = try? events.pushIgnoringCapacity(.disconnected(reason: reason))
        events.finish()
    }

    /// Subscribes again (`StopNotify`, then `StartNotify`): bluetoothd writes the peer's CCCD off and on, so a
    /// peripheral that lost this central's subscription while it stayed connected (BlueZ issue #1452) has it
    /// back. Transport asks for it when the peer is silent. A refused `StartNotify` ends the connection, and so
    /// does a request after a renewal that brought no notification (`RenewalWatch`); nothing happens on an
    /// ended link or while a renewal runs.
    public func renewIncoming() async {
        if renewals.lastRenewalWasFruitless, !state.withLock({ $0.ended }) {
            disconnect(reason: RenewalWatch.fruitlessReason)
            return
        }
        let begins = state.withLock { state -> Bool in
            guard !state.ended, !state.renewing else { return false }
            state.renewing = true
            return true
        }
        guard begins else { return }
        defer { state.withLock { $0.renewing = false } }
        _ = try? await bus.call(destination: "org.bluez", path: notifyPath, interface: "org.bluez.GattCharacteristic1",
                                member: "StopNotify")
        do throws(DBusError) {
            _ = try await bus.call(destination: "org.bluez", path: notifyPath, interface: "org.bluez.GattCharacteristic1",
                                   member: "StartNotify")
            renewals.renewed()
        } catch {
            disconnect(reason: "subscribing again failed: \(BlueZError(error, calling: "GattCharacteristic1.StartNotify on \(notifyPath)"))")
        }
    }

    public func send(_ packet: [UInt8]) async throws {
        guard packet.count <= maximumPacketSize else {
            throw LinkError.packetTooLarge(size: packet.count, limit: maximumPacketSize)
        }
        if state.withLock({ $0.ended }) { throw LinkError.disconnected(reason: "the connection ended") }
        do throws(DBusError) {
            _ = try await bus.call(destination: "org.bluez", path: writePath, interface: "org.bluez.GattCharacteristic1",
                                   member: "WriteValue",
                                   arguments: [.bytes(packet), .variantDictionary([("type", .string(writeType.rawValue))])])
        } catch .closed {
            throw LinkError.disconnected(reason: "the D-Bus connection closed")
        } catch {
            if error.name == "org.bluez.Error.NotConnected" { throw LinkError.disconnected(reason: "\(error)") }
            throw LinkError.io("WriteValue: \(error)")
        }
    }

    /// Stops notifications (`StopNotify`, also after a disconnect: bluetoothd keeps a subscription across
    /// reconnects until its client stops it or leaves the bus) and ends the connection.
    public func close() async {
        disconnect(reason: "closed locally")
        let first = state.withLock { state in defer { state.closed = true }; return !state.closed }
        if first {
            _ = try? await bus.call(destination: "org.bluez", path: notifyPath, interface: "org.bluez.GattCharacteristic1",
                                    member: "StopNotify")
        }
    }
}
