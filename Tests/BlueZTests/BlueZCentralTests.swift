import BLELink
import BlueZLink
import SDBus
import Backpressure
import GATT
import Glibc
import Synchronization
import TestSupport
import Testing
import Transport

/// The central against the fake org.bluez: find, connect (with retries), resolve, acquire, and the fallback.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZCentralTests {
    static let peripheral = FakeBlueZRemote.Device(address: "C0:11:22:33:44:55", addressType: "random", name: "msgpipe-peer",
                                                   rssi: -50, uuids: [BlueZDiscoveryTests.msgpipeService])
    /// Connect deadlines that are hang guards, not what a test judges: the whole suite runs in parallel on two busy
    /// cores, where 5 s once passed before the fake bluetoothd's answers were read.
    static let guardTime = hangGuard
    static let quickBackoff = ReconnectBackoff(initial: .milliseconds(20), maximum: .milliseconds(100), attempts: 4)

    static func withFake(_ body: (FakeBlueZRemote, DBusConnection) async throws -> Void) async throws {
        try await BlueZDiscoveryTests.withFake(body)
    }

    @Test func writePacketsLeaveBluetoothdItsThreeBytes() {
        #expect(BlueZCentral.maximumWriteSize(mtu: 23) == 20)
        #expect(BlueZCentral.maximumWriteSize(mtu: 185) == 182)
        #expect(BlueZCentral.maximumWriteSize(mtu: 517) == 510)  // bluetoothd before 5.69 drops longer writes
        #expect(BlueZCentral.maximumWriteSize(mtu: 0) == 20)
    }

    @Test func aMessageOf100KiBGoesToThePeripheralAndOneComesBackThroughTheAcquiredDescriptors() async throws {
        try await Self.withFake { fake, client in
            fake.announceWhenDiscovering(BlueZDiscoveryTests.foreign)
            fake.announceWhenDiscovering(Self.peripheral)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: .seconds(10), backoff: Self.quickBackoff)
            #expect(connection.usesAcquiredDescriptors)
            #expect(connection.mtu == 185)
            #expect(connection.device == Self.peripheral.path)
            #expect(connection.peer == BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom))
            #expect(fake.record.stops.withLock { $0 } == 1)  // discovery ended before the connect
            let writeEnd = try #require(fake.record.writeEnd.withLock { $0.take() })
            let notifyEnd = try #require(fake.record.notifyEnd.withLock { $0.take() })
            let far = try AcquiredLink(sending: notifyEnd, receiving: writeEnd,
                                       maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
            let acquired = try #require(connection.link as? AcquiredLink)
            #expect(acquired.maximumPacketSize == 182)  // ATT_MTU - 3 for writes
            let centralTransport = Transport(link: connection.link)
            let peripheralTransport = Transport(link: far)
            let big = (0..<(100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            async let received = peripheralTransport.messages.first { _ in true }
            try await centralTransport.send(big, timeout: hangGuard)
            #expect(await received?.body == big)
            async let back = centralTransport.messages.first { _ in true }
            try await peripheralTransport.send(Array("done".utf8), timeout: hangGuard)
            #expect(await back?.body == Array("done".utf8))
            await centralTransport.close()
            await peripheralTransport.close()
            await connection.disconnect()
            #expect(fake.record.disconnects.withLock { $0 } == 1)
        }
    }

    @Test(arguments: [
        DBusError.remote(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"),
        DBusError.remote(name: "org.bluez.Error.InProgress", message: "In Progress"),
        // A Connect bluetoothd did not answer in time (the peripheral stopped advertising while it serves
        // another central, PROTOCOL.md 5.8): asked again.
        DBusError.remote(name: "org.freedesktop.DBus.Error.NoReply", message: "Method call timed out"),
    ])
    func connectIsRetriedOnABusyRadioAndAKnownAddressNeedsNoDiscovery(error: DBusError) async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.connectFailures = 2
            device.connectError = error
            try await fake.add(device)
            let connection = try await BlueZCentral.connect(
                bus: client, target: CentralTarget("C0:11:22:33:44:55/random"), profile: .msgpipe, timeout: .seconds(10),
                backoff: Self.quickBackoff)
            #expect(fake.record.connectAttempts.withLock { $0 } == 3)
            #expect(fake.record.starts.withLock { $0 } == 0)
            #expect(connection.usesAcquiredDescriptors)
            await connection.disconnect()
        }
    }

    /// Two peers connected at once through one bluetoothd: their `Device1.Connect` calls take turns on the
    /// adapter (one LE connection creation at a time), so the second is asked only once the first answered.
    @Test func twoPeersConnectingAtOnceTakeTurnsOnTheAdapter() async throws {
        try await Self.withFake { fake, client in
            var first = Self.peripheral
            first.connectDelay = .milliseconds(300)
            var second = first
            second.address = "C0:11:22:33:44:66"
            second.name = "msgpipe-peer-2"
            try await fake.add(first)
            try await fake.add(second)
            let (target1, target2) = (CentralTarget(first.address + "/random"), CentralTarget(second.address + "/random"))
            async let one = BlueZCentral.connect(bus: client, target: target1, profile: .msgpipe, timeout: .seconds(10))
            async let two = BlueZCentral.connect(bus: client, target: target2, profile: .msgpipe, timeout: .seconds(10))
            let connections = try await [one, two]
            #expect(Set(connections.map(\.device)) == [first.path, second.path])
            #expect(fake.record.connectAttempts.withLock { $0 } == 2)
            #expect(fake.record.mostConnectsPending.withLock { $0 } == 1, "two Connect calls were pending at once")
            for connection in connections { await connection.disconnect() }
        }
    }

    @Test func aDeviceAnotherClientConnectedIsUsedByNameWithoutDiscoveryAndLeftConnected() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.rssi = nil  // connected peripherals usually stop advertising
            device.alreadyConnected = true
            try await fake.add(device)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: Self.guardTime)
            #expect(connection.usesAcquiredDescriptors)
            #expect(fake.record.starts.withLock { $0 } == 0)
            #expect(fake.record.connectAttempts.withLock { $0 } == 0)
            #expect(!connection.madeTheConnection)
            await connection.disconnect()
            #expect(fake.record.disconnects.withLock { $0 } == 0)
        }
    }

    /// A renewal (Transport found the peer silent: bluez#1452) closes the notify descriptor, which bluetoothd
    /// sees as the unsubscribe, acquires it again, and receives on the new one; the link stays up. When
    /// bluetoothd still counts the closed descriptor (`held`) it refuses AcquireNotify: the renewal waits for its
    /// `NotifyAcquired` false, then asks once more (no polling: one refusal, however long the release takes).
    @Test(arguments: [false, true])
    func aRenewalAcquiresTheNotifyDescriptorAgainAndReceivesOnIt(held: Bool) async throws {
        try await Self.withFake { fake, client in
            fake.announceWhenDiscovering(Self.peripheral)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: .seconds(10), backoff: Self.quickBackoff)
            let first = try #require(fake.record.notifyEnd.withLock { $0.take() })
            defer { close(first) }
            let link = try #require(connection.link as? AcquiredLink)
            var events = link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 182))
            fake.record.notifyHeld.withLock { $0 = held }
            let renewal = Task { await link.renewIncoming() }
            if held {
                var refusals = fake.record.notifyRefusals.makeAsyncIterator()
                #expect(await refusals.next() != nil)
                try await Task.sleep(for: .milliseconds(300))
                try await fake.releaseNotify(device: Self.peripheral)
            }
            await renewal.value
            #expect(fake.record.notifyRefusalCount.withLock { $0 } == (held ? 1 : 0), "asked again only after the release")
            var buffer = [UInt8](repeating: 0, count: 8)
            var ready = pollfd(fd: first, events: Int16(POLLIN), revents: 0)
            #expect(poll(&ready, 1, 5_000) == 1)
            #expect(Glibc.recv(first, &buffer, buffer.count, 0) == 0, "the first notify descriptor was closed")
            let second = try #require(fake.record.notifyEnd.withLock { $0.take() }, "AcquireNotify was called again")
            defer { close(second) }
            #expect(Glibc.send(second, [UInt8]([4, 2]), 2, 0) == 2)
            #expect(await events.next() == .packet([4, 2]))
            await connection.disconnect()
        }
    }

    @Test func connectGivesUpAfterItsAttempts() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.connectFailures = 100
            try await fake.add(device)
            await #expect(throws: BlueZError.connectFailed(
                device: device.path, attempts: 4,
                reason: "org.bluez.Error.Failed: le-connection-abort-by-local")) {
                try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                               timeout: .seconds(10), backoff: Self.quickBackoff)
            }
            #expect(fake.record.connectAttempts.withLock { $0 } == 4)
        }
    }

    /// bluetoothd still at an earlier Connect (the peripheral does not advertise now: it serves another central)
    /// is asked again until the deadline, not only `attempts` times.
    @Test func aConnectStillInProgressIsAskedAgainUntilTheDeadline() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.connectFailures = 6  // more than quickBackoff's 4 attempts
            device.connectError = .remote(name: "org.bluez.Error.InProgress", message: "In Progress")
            try await fake.add(device)
            let connection = try await BlueZCentral.connect(
                bus: client, target: CentralTarget("C0:11:22:33:44:55/random"), profile: .msgpipe, timeout: .seconds(10),
                backoff: Self.quickBackoff)
            #expect(fake.record.connectAttempts.withLock { $0 } == 7)
            await connection.disconnect()
        }
    }

    @Test func aConnectErrorNoRetryCanFixIsThrownAtOnce() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.connectFailures = 100
            device.connectError = .remote(name: "org.bluez.Error.NotAvailable", message: "Operation currently not available")
            try await fake.add(device)
            await #expect(throws: BlueZError.dbus(device.connectError)) {
                try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                               timeout: .seconds(10), backoff: Self.quickBackoff)
            }
            #expect(fake.record.connectAttempts.withLock { $0 } == 1)
        }
    }

    @Test func servicesThatNeverResolveAreAClearError() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.resolvesServices = false
            try await fake.add(device)
            let started = ContinuousClock.now
            // 10 s: the fake's Connect reply must fit in it however busy the machine is, or the error is the call's
            // timeout; the test waits it out.
            await #expect(throws: BlueZError.servicesNotResolved(device: device.path, timeout: .seconds(10))) {
                try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                               timeout: .seconds(10), backoff: Self.quickBackoff)
            }
            // Bounded, not hung: 60 s, six times the timeout, because a loaded 2-core machine took 36 s for the
            // fake bus's own round trips; a connect that waited for services with no timeout would never end.
            #expect(ContinuousClock.now - started < .seconds(60))
            #expect(fake.record.disconnects.withLock { $0 } == 1)  // the connection we made is ended again
        }
    }

    @Test func cancellingAConnectEndsItPromptly() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.resolvesServices = false
            try await fake.add(device)
            let attempt = Task {
                try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe, timeout: .seconds(30))
            }
            try await Task.sleep(for: .milliseconds(200))
            let cancelled = ContinuousClock.now  // timed from the cancel: a loaded host may stretch the pause
            attempt.cancel()
            await #expect(throws: BlueZError.self) { try await attempt.value }
            #expect(ContinuousClock.now - cancelled < .seconds(15), "well inside the 30 s connect timeout")
        }
    }

    @Test func aTargetNeverSeenIsDeviceNotFound() async throws {
        try await Self.withFake { _, client in
            await #expect(throws: BlueZError.deviceNotFound("name 'nobody'", timeout: .milliseconds(500))) {
                try await BlueZCentral.connect(bus: client, target: .name("nobody"), profile: .msgpipe, timeout: .milliseconds(500))
            }
        }
    }

    @Test func aMissingCharacteristicIsATypedErrorNamingItsUUID() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.tx = nil
            try await fake.add(device)
            await #expect(throws: BlueZError.characteristicNotFound(uuid: "4D500003-8C5D-4E2B-9F1A-6D7367706970",
                                                                    service: "4D500001-8C5D-4E2B-9F1A-6D7367706970")) {
                try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe, timeout: Self.guardTime)
            }
            await #expect(throws: BlueZError.serviceNotFound(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", device: device.path)) {
                try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .nordicUART, timeout: Self.guardTime)
            }
        }
    }

    @Test func device1ConnectedFalseEndsTheLink() async throws {
        try await Self.withFake { fake, client in
            try await fake.add(Self.peripheral)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: Self.guardTime)
            // Through the existential, as the CLI holds it.
            var events = connection.link.events.makeAsyncIterator()
            #expect(try await events.next() == .connected(maximumPacketSize: 182))
            try await fake.setConnected(false, device: Self.peripheral)
            #expect(try await events.next() == .disconnected(reason: "the peripheral disconnected (Device1.Connected false)"))
            #expect(try await events.next() == nil)
        }
    }

    /// bluetoothd 5.66 leaves Connected false on the bus when the ATT socket connected first (without the fix,
    /// `send --to NAME` failed with "disconnected while the connection was being set up" after acquiring).
    @Test func servicesResolvedWithoutAConnectedSignalIsAConnectionAndConnectedFalseStillEndsIt() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.emitsConnected = false
            try await fake.add(device)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: Self.guardTime)
            #expect(connection.usesAcquiredDescriptors)
            var events = connection.link.events.makeAsyncIterator()
            #expect(try await events.next() == .connected(maximumPacketSize: 182))
            try await fake.setConnected(false, device: device)
            #expect(try await events.next() == .disconnected(reason: "the peripheral disconnected (Device1.Connected false)"))
        }
    }

    @Test func bluetoothdLeavingTheBusEndsTheFallbackLink() async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.txFlags = ["indicate"]
            try await fake.add(device)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: Self.guardTime)
            let link = try #require(connection.link as? BlueZValueLink)
            var events = link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 182))
            fake.stop()
            #expect(await events.next() == .disconnected(reason: "bluetoothd left the D-Bus"))
            #expect(await events.next() == nil)
        }
    }

    @Test(arguments: [
        (["write"], ["indicate"], BlueZValueLink.WriteType.request),
        (["write", "write-without-response"], ["indicate"], .command),
    ])
    func theWriteValueAndStartNotifyFallbackMovesPackets(rxFlags: [String], txFlags: [String], type: BlueZValueLink.WriteType) async throws {
        try await Self.withFake { fake, client in
            var device = Self.peripheral
            device.rxFlags = rxFlags
            device.txFlags = txFlags
            device.mtu = 247
            try await fake.add(device)
            let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                            timeout: Self.guardTime)
            #expect(!connection.usesAcquiredDescriptors)
            #expect(connection.mtu == 247)
            let link = try #require(connection.link as? BlueZValueLink)
            #expect(link.writeType == type)
            #expect(fake.record.notifying.withLock { $0 })
            var events = link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 244))
            try await link.send([1, 2, 3])
            try await link.send(Array(repeating: 7, count: 244))
            await #expect(throws: LinkError.packetTooLarge(size: 245, limit: 244)) { try await link.send(Array(repeating: 0, count: 245)) }
            var writes = fake.record.writes.makeAsyncIterator()
            let first = try #require(await writes.next())
            #expect(first.value == [1, 2, 3] && first.type == type.rawValue)
            #expect(await writes.next()?.value == Array(repeating: 7, count: 244))
            try await fake.notify([9, 9], device: device)
            try await fake.notify([8], device: device)
            #expect(await events.next() == .packet([9, 9]))
            #expect(await events.next() == .packet([8]))
            try await fake.setConnected(false, device: device)
            #expect(await events.next() == .disconnected(reason: "the peripheral disconnected (Device1.Connected false)"))
            await #expect(throws: LinkError.self) { try await link.send([1]) }
            await connection.disconnect()
            #expect(!fake.record.notifying.withLock { $0 })  // StopNotify, although the device had gone
        }
    }

    /// A peer whose RX allows Write Requests only and whose TX indicates only, connected: the fallback link.
    static func connectToFallbackPeer(fake: FakeBlueZRemote, client: DBusConnection) async throws
        -> (FakeBlueZRemote.Device, BlueZCentral.Connection) {
        var device = peripheral
        device.rxFlags = ["write"]
        device.txFlags = ["indicate"]
        try await fake.add(device)
        let connection = try await BlueZCentral.connect(bus: client, target: .name("msgpipe-peer"), profile: .msgpipe,
                                                        timeout: Self.guardTime)
        return (device, connection)
    }

    /// The fallback's renewal (Transport asks for it when the peer is silent, BlueZ issue #1452): StopNotify, then
    /// StartNotify, and notifications go on arriving on the same link; a refused StartNotify ends the connection.
    @Test func theFallbackSubscribesAgainWithStopAndStartNotify() async throws {
        try await Self.withFake { fake, client in
            let (device, connection) = try await Self.connectToFallbackPeer(fake: fake, client: client)
            let link = try #require(connection.link as? BlueZValueLink)
            var events = link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 182))
            await connection.link.renewIncoming()
            #expect(fake.record.notifyCalls.withLock { $0 } == ["start", "stop", "start"])
            #expect(fake.record.notifying.withLock { $0 })
            try await fake.notify([5], device: device)
            #expect(await events.next() == .packet([5]))

            fake.record.startNotifyError.withLock { $0 = .remote(name: "org.bluez.Error.Failed", message: "Not connected") }
            await connection.link.renewIncoming()
            let ended = await events.next()
            guard case let .disconnected(reason)? = ended else {
                Issue.record("a refused StartNotify did not end the link: \(String(describing: ended))")
                return
            }
            #expect(reason.hasPrefix("subscribing again failed"), "\(reason)")
            await connection.link.renewIncoming()  // an ended link asks nothing
            #expect(fake.record.notifyCalls.withLock { $0 }.count == 5)
            await connection.disconnect()
        }
    }

    @Test func aTransportMessageCrossesTheFallbackBothWays() async throws {
        try await Self.withFake { fake, client in
            let (device, connection) = try await Self.connectToFallbackPeer(fake: fake, client: client)
            let far = FakeValuePeripheral(fake: fake, device: device, maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
            let centralTransport = Transport(link: connection.link)
            let peripheralTransport = Transport(link: far)
            let message = (0..<(8 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 5) }
            async let received = peripheralTransport.messages.first { _ in true }
            try await centralTransport.send(message, timeout: hangGuard)
            #expect(await received?.body == message)
            async let back = centralTransport.messages.first { _ in true }
            try await peripheralTransport.send(Array("ack".utf8), timeout: hangGuard)
            #expect(await back?.body == Array("ack".utf8))
            await centralTransport.close()
            await peripheralTransport.close()
            far.stop()
        }
    }
}

/// The peripheral's side of the fallback as a Link: packets are what the central wrote with WriteValue, sends
/// are Value notifications through the fake.
final class FakeValuePeripheral: Link, Sendable {
    let events = BoundedAsyncQueue<LinkEvent, Never>(capacity: 4096)
    let maximumPacketSize: Int
    private let fake: FakeBlueZRemote
    private let device: FakeBlueZRemote.Device
    private let pump: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(fake: FakeBlueZRemote, device: FakeBlueZRemote.Device, maximumPacketSize: Int) {
        self.fake = fake
        self.device = device
        self.maximumPacketSize = maximumPacketSize
        _ = try? events.pushIgnoringCapacity(.connected(maximumPacketSize: maximumPacketSize))
        let events = self.events
        pump.withLock {
            $0 = Task {
                for await write in fake.record.writes {
                    do { try await events.push(.packet(write.value)) } catch { return }
                }
            }
        }
    }

    func send(_ packet: [UInt8]) async throws { try await fake.notify(packet, device: device) }

    func close() async { stop() }

    func stop() {
        pump.withLock { $0?.cancel() }
        events.finish()
    }
}
