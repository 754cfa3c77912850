import Backpressure
import BLELink
import BlueZLink
import SDBus
import Glibc
import GATT
import Testing
import Transport

/// bluetoothd restarting under a running peripheral, played by stopping the FakeBlueZ (its bus connection
/// closes: NameOwnerChanged) and starting another on the same private bus.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZPeripheralRestartTests {
    static let info = BlueZPeripheralTests.info

    /// A Transport message each way between a central on `ends` and the peripheral's next connection.
    static func exchange(over ends: (write: Int32, notify: Int32), mtu: Int, accepted: inout BoundedAsyncQueue<BlueZPeripheral.Connection, Never>.AsyncIterator,
                         text: String) async throws {
        let central = try AcquiredLink(sending: ends.write, receiving: ends.notify, maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: mtu))
        let connection = try #require(await accepted.next())
        let centralTransport = Transport(link: central)
        let peripheralTransport = Transport(link: connection.link)
        let body = Array(text.utf8) + (0..<3000).map { UInt8(truncatingIfNeeded: $0) }
        async let received = peripheralTransport.messages.first { _ in true }
        try await centralTransport.send(body, timeout: .seconds(10))
        #expect(await received?.body == body)
        async let back = centralTransport.messages.first { _ in true }
        try await peripheralTransport.send(Array("ok".utf8), timeout: .seconds(10))
        #expect(await back?.body == Array("ok".utf8))
        await centralTransport.close()
        await peripheralTransport.close()
    }

    @Test func bluetoothdLeavingEndsTheLinksAndItsSuccessorGetsTheApplicationAgain() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let first = try await FakeBlueZ(address: bus.address)
        defer { first.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        let (events, reported) = AsyncStream.makeStream(of: BlueZPeripheral.Event.self)
        let peripheral = try await BlueZPeripheral.start(bus: app, profile: .msgpipe, info: Self.info, localName: "msgpipe-test") {
            reported.yield($0)
        }
        defer { peripheral.stop() }
        var notices = events.makeAsyncIterator()
        var accepted = peripheral.connections.makeAsyncIterator()

        // A central is connected when bluetoothd goes away.
        let firstEnds = try await first.acquire(device: BlueZPeripheralTests.device, mtu: 185)
        defer {
            close(firstEnds.write)
            close(firstEnds.notify)
        }
        let up = try #require(await accepted.next())
        var linkEvents = up.link.events.makeAsyncIterator()
        #expect(await linkEvents.next() == .connected(maximumPacketSize: 180))
        first.stop()
        #expect(await notices.next() == .bluetoothdLeft(disconnectedLinks: 1))
        #expect(await linkEvents.next() == .disconnected(reason: "bluetoothd left the bus"))
        #expect(await linkEvents.next() == nil)

        // bluetoothd comes back: the same tree is registered with it, and the next central gets a working link.
        let second = try await FakeBlueZ(address: bus.address)
        defer { second.stop() }
        #expect(await notices.next() == .registeredAgain)
        let tree = try #require(second.record.application.withLock { $0?.tree })
        #expect(tree["/org/msgpipe/app/service0/char0"]?["org.bluez.GattCharacteristic1"]?["WriteAcquired"] == .boolean(false))
        #expect(tree["/org/msgpipe/app/service0/char1"]?["org.bluez.GattCharacteristic1"]?["NotifyAcquired"] == .boolean(false))
        #expect(second.record.advertisement.withLock { $0?["LocalName"] } == .string("msgpipe-test"))
        let secondEnds = try await second.acquire(device: "/org/bluez/hci0/dev_22_33_44_55_66_77", mtu: 185)
        try await Self.exchange(over: secondEnds, mtu: 185, accepted: &accepted, text: "after the restart")
    }

    /// Also when the adapter's LEAdvertisingManager1 comes after its GattManager1 (bluetoothd 5.66: without the fix
    /// the first RegisterAdvertisement failed with UnknownInterface, reported as "too old", and nothing retried).
    @Test(arguments: [false, true])
    func aBluetoothdWhoseAdapterComesLaterGetsTheApplicationWhenItAppears(advertisingLate: Bool) async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let first = try await FakeBlueZ(address: bus.address)
        defer { first.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        let (events, reported) = AsyncStream.makeStream(of: BlueZPeripheral.Event.self)
        let peripheral = try await BlueZPeripheral.start(bus: app, profile: .nordicUART, info: Self.info, localName: "late") {
            reported.yield($0)
        }
        defer { peripheral.stop() }
        var notices = events.makeAsyncIterator()
        first.stop()
        #expect(await notices.next() == .bluetoothdLeft(disconnectedLinks: 0))
        let second = try await FakeBlueZ(address: bus.address, adapterLate: true, advertisingLate: advertisingLate)
        defer { second.stop() }
        // An attempt that meets the name before the adapter (or its managers) is no failure: InterfacesAdded
        // brings the registration.
        #expect(await notices.next() == .registeredAgain)
        #expect(second.record.advertisement.withLock { $0?["LocalName"] } == .string("late"))
        var accepted = peripheral.connections.makeAsyncIterator()
        let ends = try await second.acquire(device: BlueZPeripheralTests.device, mtu: 100)
        try await Self.exchange(over: ends, mtu: 100, accepted: &accepted, text: "late adapter")
    }

    @Test func stopEndsTheConnectionsEvenAfterARestart() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let first = try await FakeBlueZ(address: bus.address)
        defer { first.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        let (events, reported) = AsyncStream.makeStream(of: BlueZPeripheral.Event.self)
        let peripheral = try await BlueZPeripheral.start(bus: app, profile: .msgpipe, info: Self.info, localName: "x") {
            reported.yield($0)
        }
        var notices = events.makeAsyncIterator()
        first.stop()
        #expect(await notices.next() == .bluetoothdLeft(disconnectedLinks: 0))
        let second = try await FakeBlueZ(address: bus.address)
        defer { second.stop() }
        #expect(await notices.next() == .registeredAgain)
        peripheral.stop()
        var accepted = peripheral.connections.makeAsyncIterator()
        #expect(await accepted.next() == nil)
    }
}
