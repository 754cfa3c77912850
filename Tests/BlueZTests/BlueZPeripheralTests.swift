import BLELink
import BlueZLink
import SDBus
import Glibc
import GATT
import Synchronization
import Testing
import Transport

/// A fake org.bluez over our own D-Bus layer: GattManager1 and LEAdvertisingManager1 on /org/bluez/hci0.
/// On registration it reads the application's tree (GetManagedObjects) and the advertisement's properties,
/// as bluetoothd does, and keeps them for the test.
final class FakeBlueZ: Sendable {
    final class Record: Sendable {
        let application = Mutex<(owner: String, tree: [String: [String: [String: DBusValue]]])?>(nil)
        let advertisement = Mutex<[String: DBusValue]?>(nil)
        /// How often UnregisterAdvertisement took it away.
        let unregisteredAdvertisements = Atomic<Int>(0)
        /// RegisterAgent's caller, path and capability.
        let agent = Mutex<(owner: String, path: String, capability: String)?>(nil)
        /// The paths RequestDefaultAgent was asked for (also when refused).
        let defaultAgentRequests = Mutex<[String]>([])
    }

    let bus: DBusConnection
    let record = Record()
    private let registrations = Mutex<[DBusRegistration]>([])

    /// With `adapterLate`, it takes the name org.bluez before its adapter exists and announces the adapter
    /// afterwards with InterfacesAdded, as a starting bluetoothd does; with `advertisingLate` too, the adapter
    /// comes with GattManager1 first and LEAdvertisingManager1 in a second InterfacesAdded, as bluetoothd 5.66
    /// adds it once the kernel answered Read Advertising Features.
    /// `refuseDefaultAgent`: RequestDefaultAgent fails (as for another agent bluetoothd keeps as default).
    /// Registering the same application or advertisement twice fails with AlreadyExists, as in bluetoothd.
    init(address: String, powered: Bool = true, adapterLate: Bool = false, advertisingLate: Bool = false,
         refuseDefaultAgent: Bool = false) async throws {
        bus = try DBusConnection(address: address)
        if adapterLate { try await bus.requestName("org.bluez") }
        let connection = bus
        let record = self.record
        let gatt = try await bus.export(DBusInterface(name: "org.bluez.GattManager1", methods: [
            DBusMethod("RegisterApplication", input: "oa{sv}") { call throws(DBusError) in
                let root = call.arguments[0].stringValue ?? "/"
                if record.application.withLock({ $0?.owner == call.sender }) {
                    throw .remote(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
                }
                Task {
                    do {
                        let tree = try await connection.managedObjects(destination: call.sender, path: root)
                        record.application.withLock { $0 = (call.sender, tree) }
                        call.reply()
                    } catch { call.fail(.failed("\(error)")) }
                }
                return nil
            },
        ]), at: "/org/bluez/hci0")
        let advertisingInterface = DBusInterface(name: "org.bluez.LEAdvertisingManager1", methods: [
            DBusMethod("UnregisterAdvertisement", input: "o") { _ throws(DBusError) in
                guard record.advertisement.withLock({ $0 != nil }) else {
                    throw .remote(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")
                }
                record.advertisement.withLock { $0 = nil }
                record.unregisteredAdvertisements.add(1, ordering: .relaxed)
                return []
            },
            DBusMethod("RegisterAdvertisement", input: "oa{sv}") { call throws(DBusError) in
                let path = call.arguments[0].stringValue ?? "/"
                if record.advertisement.withLock({ $0 != nil }) {
                    throw .remote(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")
                }
                Task {
                    do {
                        let properties = try await connection.allProperties(destination: call.sender, path: path,
                                                                            interface: "org.bluez.LEAdvertisement1")
                        record.advertisement.withLock { $0 = properties }
                        call.reply()
                    } catch { call.fail(.failed("\(error)")) }
                }
                return nil
            },
        ])
        let advertising = advertisingLate ? nil : try await bus.export(advertisingInterface, at: "/org/bluez/hci0")
        let adapter = try await bus.export(DBusInterface(name: "org.bluez.Adapter1", properties: [
            DBusProperty("Powered", .boolean(powered)), DBusProperty("Address", .string("00:11:22:33:44:55")),
        ]), at: "/org/bluez/hci0")
        let agents = try await bus.export(DBusInterface(name: "org.bluez.AgentManager1", methods: [
            DBusMethod("RegisterAgent", input: "os") { call throws(DBusError) in
                guard let path = call.arguments[0].stringValue, let capability = call.arguments[1].stringValue else { return [] }
                record.agent.withLock { $0 = (call.sender, path, capability) }
                return []
            },
            DBusMethod("RequestDefaultAgent", input: "o") { call throws(DBusError) in
                record.defaultAgentRequests.withLock { $0.append(call.arguments[0].stringValue ?? "") }
                if refuseDefaultAgent { throw .remote(name: "org.bluez.Error.Failed", message: "Failed to set as default") }
                return []
            },
            DBusMethod("UnregisterAgent", input: "o") { _ in
                record.agent.withLock { $0 = nil }
                return []
            },
        ]), at: "/org/bluez")
        registrations.withLock { $0 = [gatt, adapter, agents] + (advertising.map { [$0] } ?? []) }
        guard adapterLate else {
            try await bus.requestName("org.bluez")
            return
        }
        try await bus.emitSignal(path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded", arguments: [
            .objectPath("/org/bluez/hci0"),
            .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                DBusDictionaryEntry(key: .string("org.bluez.Adapter1"), value: .variantDictionary([("Powered", .boolean(powered))])),
                DBusDictionaryEntry(key: .string("org.bluez.GattManager1"), value: .variantDictionary([])),
            ] + (advertisingLate ? [] : [
                DBusDictionaryEntry(key: .string("org.bluez.LEAdvertisingManager1"), value: .variantDictionary([])),
            ])),
        ])
        guard advertisingLate else { return }
        try await Task.sleep(for: .milliseconds(50))
        let late = try await bus.export(advertisingInterface, at: "/org/bluez/hci0")
        registrations.withLock { $0.append(late) }
        try await bus.emitSignal(path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded", arguments: [
            .objectPath("/org/bluez/hci0"),
            .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                DBusDictionaryEntry(key: .string("org.bluez.LEAdvertisingManager1"), value: .variantDictionary([])),
            ]),
        ])
    }

    /// Plays bluetoothd for a central subscribing and writing: AcquireNotify, then AcquireWrite, with the
    /// options bluetoothd passes; returns the central's ends.
    func acquire(device: String, mtu: UInt16) async throws -> (write: Int32, notify: Int32) {
        let owner = try #require(record.application.withLock { $0?.owner })
        let options = DBusValue.variantDictionary([("device", .objectPath(device)), ("mtu", .uint16(mtu)), ("link", .string("LE"))])
        let notify = try await bus.call(destination: owner, path: "/org/msgpipe/app/service0/char1",
                                        interface: "org.bluez.GattCharacteristic1", member: "AcquireNotify", arguments: [options])
        let write = try await bus.call(destination: owner, path: "/org/msgpipe/app/service0/char0",
                                       interface: "org.bluez.GattCharacteristic1", member: "AcquireWrite", arguments: [options])
        #expect(notify.count == 2 && notify[1] == .uint16(mtu))
        #expect(write.count == 2 && write[1] == .uint16(mtu))
        return (try #require(write[0].fileDescriptorValue?.take()), try #require(notify[0].fileDescriptorValue?.take()))
    }

    func stop() {
        for registration in registrations.withLock({ $0 }) { registration.cancel() }
        bus.close()
    }
}

@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZPeripheralTests {
    static let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 517)
    static let device = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    /// A fake bluetoothd on a private bus and a peripheral registered with it (`oneCentralAtATime`,
    /// `turnTimeout` and `onEvent` as ``BlueZPeripheral/start(bus:adapter:profile:info:localName:root:backlog:security:oneCentralAtATime:turnTimeout:onEvent:)``).
    static func withPeripheral(
        info: MsgPipeServiceInfo = info, oneCentralAtATime: Bool = false, turnTimeout: Duration = .seconds(10),
        onEvent: @escaping @Sendable (BlueZPeripheral.Event) -> Void = { _ in },
        _ body: (FakeBlueZ, BlueZPeripheral, DBusConnection) async throws -> Void
    ) async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        let peripheral = try await BlueZPeripheral.start(
            bus: app, profile: .msgpipe, info: info, localName: "msgpipe-test", oneCentralAtATime: oneCentralAtATime,
            turnTimeout: turnTimeout, onEvent: onEvent)
        defer { peripheral.stop() }
        try await body(fake, peripheral, app)
    }

    @Test func registrationAndAdvertisementCarryTheProfile() async throws {
        try await Self.withPeripheral { fake, _, _ in
            let tree = try #require(fake.record.application.withLock { $0?.tree })
            let service = try #require(tree["/org/msgpipe/app/service0"]?["org.bluez.GattService1"])
            #expect(service["UUID"]?.stringValue?.uppercased() == "4D500001-8C5D-4E2B-9F1A-6D7367706970")
            #expect(service["Primary"] == .boolean(true))
            let rx = try #require(tree["/org/msgpipe/app/service0/char0"]?["org.bluez.GattCharacteristic1"])
            #expect(rx["Flags"]?.stringArray == ["write", "write-without-response"])
            #expect(rx["WriteAcquired"] == .boolean(false))
            #expect(rx["Service"] == .objectPath("/org/msgpipe/app/service0"))
            let tx = try #require(tree["/org/msgpipe/app/service0/char1"]?["org.bluez.GattCharacteristic1"])
            #expect(tx["Flags"]?.stringArray == ["notify", "indicate"])
            #expect(tx["NotifyAcquired"] == .boolean(false))
            let info = try #require(tree["/org/msgpipe/app/service0/char2"]?["org.bluez.GattCharacteristic1"])
            #expect(info["Flags"]?.stringArray == ["read"])
            let advertisement = try #require(fake.record.advertisement.withLock { $0 })
            #expect(advertisement["Type"] == .string("peripheral"))
            #expect(advertisement["LocalName"] == .string("msgpipe-test"))
            #expect(advertisement["Discoverable"] == .boolean(true), "a desktop's unfiltered scan lists only discoverable advertisers")
            #expect(advertisement["ServiceUUIDs"]?.stringArray?.map { $0.uppercased() } == ["4D500001-8C5D-4E2B-9F1A-6D7367706970"])
            // bluetoothd reads the info characteristic through ReadValue.
            let owner = try #require(fake.record.application.withLock { $0?.owner })
            let read = try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char2",
                                               interface: "org.bluez.GattCharacteristic1", member: "ReadValue",
                                               arguments: [.variantDictionary([])])
            #expect(read == [.bytes(Self.info.bytes)])
        }
    }

    /// With a channel open the service also publishes its PSM (Apple's characteristic), readable through bluetoothd.
    @Test func aChannelsPSMIsPublishedBesideTheInfoCharacteristic() async throws {
        var withChannel = Self.info
        withChannel.psm = 0x0083
        try await Self.withPeripheral(info: withChannel) { fake, _, _ in
            let tree = try #require(fake.record.application.withLock { $0?.tree })
            let psm = try #require(tree["/org/msgpipe/app/service0/char3"]?["org.bluez.GattCharacteristic1"])
            #expect(psm["UUID"]?.stringValue?.uppercased() == "ABDD3056-28FA-441D-A470-55A75A52553A")
            #expect(psm["Flags"]?.stringArray == ["read"])
            let owner = try #require(fake.record.application.withLock { $0?.owner })
            let read = try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char3",
                                               interface: "org.bluez.GattCharacteristic1", member: "ReadValue",
                                               arguments: [.variantDictionary([])])
            #expect(read == [.bytes([0x83, 0x00])])
            let info = try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char2",
                                               interface: "org.bluez.GattCharacteristic1", member: "ReadValue",
                                               arguments: [.variantDictionary([])])
            #expect(info == [.bytes(withChannel.bytes)], "layout 2, the PSM at offset 10")
        }
        try await Self.withPeripheral { fake, _, _ in
            let tree = try #require(fake.record.application.withLock { $0?.tree })
            #expect(tree["/org/msgpipe/app/service0/char3"] == nil, "no channel, no PSM characteristic")
        }
    }

    /// Plays bluetoothd acquiring one characteristic's descriptor: "AcquireNotify" (char1) or "AcquireWrite"
    /// (char0) for `device`; returns our end.
    static func acquireHalf(_ fake: FakeBlueZ, _ member: String, device: String, mtu: UInt16) async throws -> Int32 {
        let owner = try #require(fake.record.application.withLock { $0?.owner })
        let options = DBusValue.variantDictionary([("device", .objectPath(device)), ("mtu", .uint16(mtu)), ("link", .string("LE"))])
        let reply = try await fake.bus.call(
            destination: owner, path: "/org/msgpipe/app/service0/" + (member == "AcquireNotify" ? "char1" : "char0"),
            interface: "org.bluez.GattCharacteristic1", member: member, arguments: [options])
        return try #require(reply.first?.fileDescriptorValue?.take())
    }

    /// A phone that only subscribes (the seeds' receiving central) is served: its link comes with the
    /// subscription, notifications reach it, and its first write later adds the other half to the same link.
    @Test func aCentralThatOnlySubscribesHasALinkAndItsLaterWritesJoinIt() async throws {
        try await Self.withPeripheral { fake, peripheral, _ in
            let notify = try await Self.acquireHalf(fake, "AcquireNotify", device: Self.device, mtu: 185)
            defer { close(notify) }
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            var events = connection.link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 180))
            try await connection.link.send([1, 2, 3])
            var buffer = [UInt8](repeating: 0, count: 16)
            var ready = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
            #expect(poll(&ready, 1, 5_000) == 1)
            #expect(recv(notify, &buffer, buffer.count, 0) == 3)
            #expect(Array(buffer.prefix(3)) == [1, 2, 3])

            let write = try await Self.acquireHalf(fake, "AcquireWrite", device: Self.device, mtu: 185)
            defer { close(write) }
            #expect(send(write, [UInt8]([9, 8]), 2, 0) == 2)
            #expect(await events.next() == .packet([9, 8]))
            #expect(peripheral.connections.count == 0, "still one connection for the device")
        }
    }

    /// A central that only writes has a link too; a send on it waits until the central subscribes.
    @Test func aCentralThatOnlyWritesHasALinkAndASendWaitsForItsSubscription() async throws {
        try await Self.withPeripheral { fake, peripheral, _ in
            let write = try await Self.acquireHalf(fake, "AcquireWrite", device: Self.device, mtu: 100)
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            var events = connection.link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 95))
            #expect(send(write, [UInt8]([7]), 1, 0) == 1)
            #expect(await events.next() == .packet([7]))
            let link = connection.link
            let sending = Task { try await link.send([4, 5]) }
            let notify = try await Self.acquireHalf(fake, "AcquireNotify", device: Self.device, mtu: 100)
            defer { close(notify) }
            try await sending.value
            var buffer = [UInt8](repeating: 0, count: 16)
            var ready = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
            #expect(poll(&ready, 1, 5_000) == 1)
            #expect(recv(notify, &buffer, buffer.count, 0) == 2)
            // The link ends when a descriptor hangs up.
            close(write)
            #expect(await events.next() == .disconnected(reason: "the peer closed the connection"))
        }
    }

    @Test func aMessageOf100KiBArrivesThroughTheAcquiredDescriptorsAndOneGoesBack() async throws {
        try await Self.withPeripheral { fake, peripheral, _ in
            let (write, notify) = try await fake.acquire(device: Self.device, mtu: 185)
            let central = try AcquiredLink(sending: write, receiving: notify, maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            #expect(connection.peer == "11:22:33:44:55:66")
            #expect(connection.device == Self.device)
            #expect(connection.link.maximumPacketSize == 180)
            let centralTransport = Transport(link: central)
            let peripheralTransport = Transport(link: connection.link)
            let big = (0..<(100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            async let received = peripheralTransport.messages.first { _ in true }
            try await centralTransport.send(big, timeout: .seconds(20))
            #expect(await received?.body == big)
            async let back = centralTransport.messages.first { _ in true }
            try await peripheralTransport.send(Array("ok".utf8), timeout: .seconds(20))
            #expect(await back?.body == Array("ok".utf8))
            await centralTransport.close()
            await peripheralTransport.close()
        }
    }

    @Test func closingTheCentralsDescriptorsIsTheDisconnect() async throws {
        try await Self.withPeripheral { fake, peripheral, _ in
            let (write, notify) = try await fake.acquire(device: Self.device, mtu: 23)
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            var events = connection.link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 18))
            close(write)
            close(notify)
            guard case .disconnected? = await events.next() else {
                Issue.record("no disconnect")
                return
            }
            #expect(await events.next() == nil)
        }
    }

    @Test func device1ConnectedFalseIsTheDisconnect() async throws {
        try await Self.withPeripheral { fake, peripheral, _ in
            _ = try await fake.acquire(device: Self.device, mtu: 247)
            var accepted = peripheral.connections.makeAsyncIterator()
            let connection = try #require(await accepted.next())
            var events = connection.link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 242))
            try await fake.bus.emitPropertiesChanged(path: Self.device, interface: "org.bluez.Device1",
                                                     changed: [("Connected", .boolean(false))])
            #expect(await events.next() == .disconnected(reason: "the central disconnected (Device1.Connected false)"))
            #expect(await events.next() == nil)
        }
    }

    @Test func aSecondCentralWhileTheFirstIsConnectedGetsItsOwnLinkAndBothCarryMessagesAtOnce() async throws {
        try await Self.withPeripheral { fake, peripheral, _ in
            let devices = [Self.device, "/org/bluez/hci0/dev_22_33_44_55_66_77"]
            var accepted = peripheral.connections.makeAsyncIterator()
            var pairs: [(central: Transport, peripheral: Transport)] = []
            for (index, device) in devices.enumerated() {
                let mtu = index == 0 ? 185 : 247
                let (write, notify) = try await fake.acquire(device: device, mtu: UInt16(mtu))
                let central = try AcquiredLink(sending: write, receiving: notify,
                                               maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: mtu))
                let connection = try #require(await accepted.next())
                #expect(connection.device == device)
                #expect(connection.link.maximumPacketSize == mtu - 5)
                pairs.append((Transport(link: central), Transport(link: connection.link)))
            }
            #expect(pairs.count == 2)
            // Both directions of both connections at the same time; each message must arrive on its own link.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, pair) in pairs.enumerated() {
                    let up = (0..<(40 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* (index + 3)) }
                    let down = Array("to central \(index)".utf8)
                    group.addTask {
                        async let received = pair.peripheral.messages.first { _ in true }
                        try await pair.central.send(up, timeout: .seconds(20))
                        #expect(await received?.body == up)
                    }
                    group.addTask {
                        async let received = pair.central.messages.first { _ in true }
                        try await pair.peripheral.send(down, timeout: .seconds(20))
                        #expect(await received?.body == down)
                    }
                }
                try await group.waitForAll()
            }
            // The first central leaving does not end the second one's link.
            await pairs[0].central.close()
            let (secondCentral, secondPeripheral) = pairs[1]
            async let last = secondPeripheral.messages.first { _ in true }
            try await secondCentral.send(Array("still here".utf8), timeout: .seconds(10))
            #expect(await last?.body == Array("still here".utf8))
            for pair in pairs {
                await pair.central.close()
                await pair.peripheral.close()
            }
        }
    }

    @Test func aMissingOrPoweredOffAdapterNamesTheRemedy() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address, powered: false)
        defer { fake.stop() }
        let app = try DBusConnection(address: bus.address)
        defer { app.close() }
        await #expect(throws: BlueZError.adapterPoweredOff("hci0")) {
            try await BlueZPeripheral.start(bus: app, profile: .nordicUART, info: Self.info, localName: "x")
        }
        await #expect(throws: BlueZError.adapterNotFound("hci7")) {
            try await BlueZPeripheral.start(bus: app, adapter: "/org/bluez/hci7", profile: .nordicUART, info: Self.info, localName: "x")
        }
    }

    @Test func anAcquireWithoutItsDeviceIsATypedError() async throws {
        try await Self.withPeripheral { fake, _, _ in
            let owner = try #require(fake.record.application.withLock { $0?.owner })
            let failure = await #expect(throws: DBusError.self) {
                try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char1",
                                        interface: "org.bluez.GattCharacteristic1", member: "AcquireNotify",
                                        arguments: [.variantDictionary([("mtu", .string("not a number"))])])
            }
            #expect(failure?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            let wrongShape = await #expect(throws: DBusError.self) {
                try await fake.bus.call(destination: owner, path: "/org/msgpipe/app/service0/char0",
                                        interface: "org.bluez.GattCharacteristic1", member: "AcquireWrite",
                                        arguments: [.uint32(1)])
            }
            #expect(wrongShape?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        }
    }
}
