import BLELink
import BlueZLink
import SDBus
import Glibc
import GATT
import Synchronization
import Testing
import Transport

/// ``BlueZPeripheral`` serving one central at a time, as it does through a bluetoothd before 5.76 (which hands
/// every central the same acquired sockets): the advertisement is taken away while a central has its turn and
/// registered again when the turn ends; another central's acquire is refused while a link is up.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZPeripheralTurnTests {
    static let first = "/org/bluez/hci0/dev_11_22_33_44_55_66"
    static let second = "/org/bluez/hci0/dev_22_33_44_55_66_77"

    /// The peripheral's advertising events, in order.
    final class AdvertisingEvents: Sendable {
        let stream: AsyncStream<Bool>
        let continuation: AsyncStream<Bool>.Continuation

        init() { (stream, continuation) = AsyncStream.makeStream() }

        func record(_ event: BlueZPeripheral.Event) {
            if case let .advertising(on) = event { continuation.yield(on) }
            if case let .advertisingFailed(reason) = event { Issue.record("advertising failed: \(reason)") }
        }
    }

    static func withPeripheral(
        oneCentralAtATime: Bool = true, turnTimeout: Duration = .seconds(20),
        _ body: (FakeBlueZ, BlueZPeripheral, AsyncStream<Bool>.Iterator) async throws -> Void
    ) async throws {
        let events = AdvertisingEvents()
        try await BlueZPeripheralTests.withPeripheral(
            oneCentralAtATime: oneCentralAtATime, turnTimeout: turnTimeout, onEvent: { events.record($0) }
        ) { fake, peripheral, _ in
            #expect(peripheral.servesOneCentralAtATime == oneCentralAtATime)
            #expect(fake.record.advertisement.withLock { $0 != nil })
            try await body(fake, peripheral, events.stream.makeAsyncIterator())
        }
    }

    static func connected(_ fake: FakeBlueZ, _ device: String, _ connected: Bool) async throws {
        try await fake.bus.emitPropertiesChanged(path: device, interface: "org.bluez.Device1",
                                                 changed: [("Connected", .boolean(connected))])
    }

    static func acquireWrite(_ fake: FakeBlueZ, device: String) async throws(DBusError) -> [DBusValue] {
        let owner = fake.record.application.withLock { $0?.owner } ?? ""
        let options = DBusValue.variantDictionary([("device", .objectPath(device)), ("mtu", .uint16(247)), ("link", .string("LE"))])
        return try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char0",
                                       interface: "org.bluez.GattCharacteristic1", member: "AcquireWrite", arguments: [options])
    }

    @Test func aCentralThatConnectsTakesTheAdvertisementAwayAndAnotherIsRefusedUntilItLeaves() async throws {
        try await Self.withPeripheral { fake, peripheral, advertising in
            var advertising = advertising
            try await Self.connected(fake, Self.first, true)
            #expect(await advertising.next() == false)
            #expect(fake.record.advertisement.withLock { $0 == nil })
            _ = try await fake.acquire(device: Self.first, mtu: 247)
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            #expect(connection.device == Self.first)

            // A second central (it raced the first one in): its writes would land in the first one's socket.
            do throws(DBusError) {
                _ = try await Self.acquireWrite(fake, device: Self.second)
                Issue.record("the second central's AcquireWrite was accepted")
            } catch {
                #expect(error.name == "org.bluez.Error.Failed")
            }

            try await Self.connected(fake, Self.first, false)
            #expect(await advertising.next() == true)
            #expect(fake.record.advertisement.withLock { $0 != nil })
            var events = connection.link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 242))
            #expect(await events.next() == .disconnected(reason: "the central disconnected (Device1.Connected false)"))

            // Now the second one may.
            try await Self.connected(fake, Self.second, true)
            #expect(await advertising.next() == false)
            _ = try await fake.acquire(device: Self.second, mtu: 185)
            #expect(try #require(await accepted.next()).device == Self.second)
        }
    }

    @Test func theAdvertisementComesBackWhenTheCentralsLinkEnds() async throws {
        try await Self.withPeripheral { fake, peripheral, advertising in
            var advertising = advertising
            let (write, notify) = try await fake.acquire(device: Self.first, mtu: 100)
            #expect(await advertising.next() == false, "the acquire began the turn")
            var accepted = peripheral.connections.makeAsyncIterator()
            _ = try #require(await accepted.next())
            close(write)
            close(notify)
            #expect(await advertising.next() == true)
            #expect(fake.record.advertisement.withLock { $0 != nil })
            #expect(fake.record.unregisteredAdvertisements.load(ordering: .relaxed) == 1)
        }
    }

    static func acquireNotify(_ fake: FakeBlueZ, device: String, mtu: UInt16) async throws -> Int32 {
        let owner = fake.record.application.withLock { $0?.owner } ?? ""
        let options = DBusValue.variantDictionary([("device", .objectPath(device)), ("mtu", .uint16(mtu)), ("link", .string("LE"))])
        let reply = try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char1",
                                            interface: "org.bluez.GattCharacteristic1", member: "AcquireNotify", arguments: [options])
        return try #require(reply.first?.fileDescriptorValue?.take())
    }

    /// An independent central (bleak) that subscribes and writes nothing has a link: it holds the turn until
    /// that link ends (listen closes a connection without a hello after 10 s), then the next one may come.
    @Test func aCentralThatOnlySubscribedHoldsTheTurnUntilItsLinkEnds() async throws {
        try await Self.withPeripheral { fake, peripheral, advertising in
            var advertising = advertising
            try await Self.connected(fake, Self.second, true)
            #expect(await advertising.next() == false)
            let notify = try await Self.acquireNotify(fake, device: Self.second, mtu: 517)
            defer { close(notify) }
            var accepted = peripheral.connections.makeAsyncIterator()
            let subscriber = try #require(await accepted.next())
            #expect(subscriber.device == Self.second)
            do throws(DBusError) {
                _ = try await Self.acquireWrite(fake, device: Self.first)
                Issue.record("another central's AcquireWrite was accepted during the subscriber's turn")
            } catch {
                #expect(error.name == "org.bluez.Error.Failed")
            }
            await subscriber.link.close()
            #expect(await advertising.next() == true)
            _ = try await fake.acquire(device: Self.first, mtu: 247)
            #expect(try #require(await accepted.next()).device == Self.first)
        }
    }

    @Test func aConnectionThatAcquiresNothingGivesItsTurnBackAfterTheTimeout() async throws {
        try await Self.withPeripheral(turnTimeout: .milliseconds(200)) { fake, _, advertising in
            var advertising = advertising
            let clock = ContinuousClock()
            let started = clock.now
            try await Self.connected(fake, Self.first, true)  // e.g. the box's own keyboard reconnecting
            #expect(await advertising.next() == false)
            #expect(await advertising.next() == true)
            #expect(started.duration(to: clock.now) >= .milliseconds(200))
        }
    }

    @Test func aCentralThatAcquiresWhileAnIdleConnectionHasTheTurnTakesIt() async throws {
        try await Self.withPeripheral { fake, peripheral, advertising in
            var advertising = advertising
            try await Self.connected(fake, Self.second, true)  // connected, never acquires
            #expect(await advertising.next() == false)
            _ = try await fake.acquire(device: Self.first, mtu: 247)
            var accepted = peripheral.connections.makeAsyncIterator()
            #expect(try #require(await accepted.next()).device == Self.first)
            // The idle one leaving changes nothing: the turn is the first's now.
            try await Self.connected(fake, Self.second, false)
            try await Self.connected(fake, Self.first, false)
            #expect(await advertising.next() == true)
            #expect(fake.record.unregisteredAdvertisements.load(ordering: .relaxed) == 1)
        }
    }

    @Test func severalCentralsAtOnceKeepTheAdvertisementAndEachGetsALink() async throws {
        try await Self.withPeripheral(oneCentralAtATime: false) { fake, peripheral, _ in
            try await Self.connected(fake, Self.first, true)
            _ = try await fake.acquire(device: Self.first, mtu: 247)
            try await Self.connected(fake, Self.second, true)
            _ = try await fake.acquire(device: Self.second, mtu: 247)
            var accepted = peripheral.connections.makeAsyncIterator()
            #expect(try #require(await accepted.next()).device == Self.first)
            #expect(try #require(await accepted.next()).device == Self.second)
            #expect(fake.record.unregisteredAdvertisements.load(ordering: .relaxed) == 0)
            #expect(fake.record.advertisement.withLock { $0 != nil })
        }
    }
}
