import BLELink
import BlueZLink
import SDBus
import Testing

/// Discovery through the fake org.bluez: reports in the kernel scanner's type, our own filter re-checked.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZDiscoveryTests {
    static let msgpipeService = "4d500001-8c5d-4e2b-9f1a-6d7367706970"
    static let sensor = FakeBlueZRemote.Device(
        address: "C0:11:22:33:44:55", addressType: "random", name: "sensor-1", rssi: -48,
        uuids: [msgpipeService, "0000180d-0000-1000-8000-00805f9b34fb"], manufacturerData: [0x004C: [1, 2, 3]],
        serviceData: ["0000feaa-0000-1000-8000-00805f9b34fb": [9, 8]])
    static let foreign = FakeBlueZRemote.Device(address: "00:AA:BB:CC:DD:EE", name: "other", rssi: -30,
                                                uuids: ["0000180f-0000-1000-8000-00805f9b34fb"])

    static func withFake(powered: Bool = true, _ body: (FakeBlueZRemote, DBusConnection) async throws -> Void) async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address, powered: powered)
        defer { fake.stop() }
        let client = try DBusConnection(address: bus.address)
        defer { client.close() }
        try await body(fake, client)
    }

    /// A call answered by the fake: every signal it sent before has been handled when this returns (one
    /// sender's messages reach a receiver in order, and handlers run on the bus thread before the reply).
    static func roundTrip(_ client: DBusConnection) async throws {
        _ = try await client.allProperties(destination: "org.bluez", path: FakeBlueZRemote.adapter, interface: "org.bluez.Adapter1")
    }

    @Test func findsADeviceByNameWithRSSIManufacturerAndServiceData() async throws {
        try await Self.withFake { fake, client in
            fake.announceWhenDiscovering(Self.foreign)
            fake.announceWhenDiscovering(Self.sensor)
            let discovery = try await BlueZDiscovery.start(bus: client, filter: ScanFilter(name: "sensor-1"))
            let peer = try #require(try await discovery.reports.next())
            #expect(peer.peer == BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom))
            #expect(peer.name == "sensor-1")
            #expect(peer.rssi == -48)
            #expect(peer.manufacturerData == [0x004C: [1, 2, 3]])
            #expect(peer.services.map(\.description) == ["4D500001-8C5D-4E2B-9F1A-6D7367706970", "180D"])
            let filter = try #require(fake.record.filter.withLock { $0 })
            #expect(filter["Transport"] == .string("le"))
            #expect(filter["DuplicateData"] == .boolean(true))
            #expect(filter["UUIDs"] == nil)
            // A later RSSI updates the peer's state, not the reports (one per peer).
            try await fake.setRSSI(-71, device: Self.sensor)
            try await Self.roundTrip(client)
            #expect(discovery.matches.first?.rssi == -71)
            #expect(discovery.matches.first?.serviceData.keys.map(\.description) == ["FEAA"])
            await discovery.stop()
            #expect(try await discovery.reports.next() == nil)
            #expect(fake.record.stops.withLock { $0 } == 1)
        }
    }

    @Test func findsADeviceByServiceAndTheFilterRecheckDropsAForeignOne() async throws {
        try await Self.withFake { fake, client in
            // bluetoothd merges every client's filter: the foreign device reaches us although it lacks the service.
            fake.announceWhenDiscovering(Self.foreign)
            fake.announceWhenDiscovering(Self.sensor)
            var seen: [DiscoveredPeer] = []
            // The window must hold the fake's announcements on a loaded host (3 s); no check depends on its length.
            let peers = try await BlueZDiscovery.scan(
                bus: client, duration: .seconds(3),
                filter: ScanFilter(service: AdvertisedServiceUUID("4D500001-8C5D-4E2B-9F1A-6D7367706970")!)
            ) { seen.append($0) }
            #expect(seen.map(\.name) == ["sensor-1"])
            #expect(peers.map(\.peer.address.description) == ["C0:11:22:33:44:55"])
            #expect(fake.record.filter.withLock { $0 }?["UUIDs"]?.stringArray == [Self.msgpipeService])
            #expect(fake.record.starts.withLock { $0 } == 1)
            #expect(fake.record.stops.withLock { $0 } == 1)
        }
    }

    @Test func aCancelledScanStopsTheDiscovery() async throws {
        try await Self.withFake { fake, client in
            let scan = Task { try await BlueZDiscovery.scan(bus: client, duration: .seconds(30)) }
            try await Task.sleep(for: .milliseconds(200))
            // Timed from the cancel, not across the pause (which a loaded host stretched by 5 s): under 15 s
            // tells "ended by the cancel" from "ran its 30 s".
            let cancelled = ContinuousClock.now
            scan.cancel()
            _ = try await scan.value
            #expect(ContinuousClock.now - cancelled < .seconds(15))
            #expect(fake.record.starts.withLock { $0 } == 1)
            #expect(fake.record.stops.withLock { $0 } == 1)
        }
    }

    @Test func aDeviceBluetoothdAlreadyHeardIsReportedButARememberedOneIsNot() async throws {
        try await Self.withFake { fake, client in
            try await fake.add(FakeBlueZRemote.Device(address: "11:11:11:11:11:11", name: "heard", rssi: -55))
            try await fake.add(FakeBlueZRemote.Device(address: "22:22:22:22:22:22", name: "remembered", rssi: nil))
            // The window must hold the report of the device already heard on a loaded host (3 s).
            let peers = try await BlueZDiscovery.scan(bus: client, duration: .seconds(3))
            #expect(peers.map(\.name) == ["heard"])
        }
    }

    @Test func aMissingOrPoweredOffAdapterNamesTheRemedy() async throws {
        try await Self.withFake(powered: false) { _, client in
            await #expect(throws: BlueZError.adapterPoweredOff("hci0")) {
                try await BlueZDiscovery.start(bus: client)
            }
            await #expect(throws: BlueZError.adapterNotFound("hci3")) {
                try await BlueZDiscovery.start(bus: client, adapter: "hci3")
            }
        }
    }

    @Test func theAdapterIsResolvedByNameAddressOrAsTheFirstPoweredOne() async throws {
        let byName = try AdapterSelector("hci0")
        let byAddress = try AdapterSelector("00:11:22:33:44:55")
        let first = try AdapterSelector(nil)
        let unknownAddress = try AdapterSelector("00:11:22:33:44:66")
        try await Self.withFake { _, client in
            let resolved = [try await BlueZAdapter.path(for: byName, bus: client), try await BlueZAdapter.path(for: byAddress, bus: client),
                            try await BlueZAdapter.path(for: first, bus: client)]
            #expect(resolved == Array(repeating: "/org/bluez/hci0", count: 3))
            await #expect(throws: BlueZError.adapterNotFound("00:11:22:33:44:66")) {
                try await BlueZAdapter.path(for: unknownAddress, bus: client)
            }
            // Discovery and the central take the resolved path as well as a name.
            #expect(BlueZAdapter.path("hci0") == "/org/bluez/hci0" && BlueZAdapter.path("/org/bluez/hci1") == "/org/bluez/hci1")
        }
    }

    @Test func startDiscoveryRefusalsAreTypedAndLeaveNoSessionBehind() async throws {
        try await Self.withFake { fake, client in
            fake.record.startDiscoveryError.withLock { $0 = .remote(name: "org.bluez.Error.InProgress", message: "Operation already in progress") }
            await #expect(throws: BlueZError.inProgress("StartDiscovery on hci0")) { try await BlueZDiscovery.start(bus: client) }
            fake.record.startDiscoveryError.withLock { $0 = .remote(name: "org.bluez.Error.NotReady", message: "Resource Not Ready") }
            await #expect(throws: BlueZError.adapterPoweredOff("hci0")) { try await BlueZDiscovery.start(bus: client) }
            #expect(fake.record.stops.withLock { $0 } == 2)
        }
    }

    @Test func withoutBluetoothdTheErrorSaysSo() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let client = try DBusConnection(address: bus.address)
        defer { client.close() }
        await #expect(throws: BlueZError.notRunning) { try await BlueZDiscovery.start(bus: client) }
    }
}

