import BLELink
import BlueZLink
import SDBus
import MsgPipe
import Synchronization
import Testing

/// `MessagePipe.scan` beside a fake bluetoothd: what `msgpipe scan` does, from a Swift program.
@Suite struct MessagePipeScanTests {
    @Test("scan through bluetoothd finds the advertiser, says where it scans, and ends the discovery session")
    func scanThroughBluetoothd() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let started = Mutex<[MessagePipe.ScanStart]>([])
        let matched = Mutex<[String]>([])
        let peers = try await MessagePipe.scan(
            adapter: "hci0", backend: .bluez, for: .seconds(3), filter: ScanFilter(name: "msgpipe-peer"),
            busAddress: bus.address, onStart: { start in started.withLock { $0.append(start) } },
            onMatch: { peer in matched.withLock { $0.append(peer.peer.address.description) } })
        #expect(peers.map(\.peer.address.description) == ["C0:11:22:33:44:55"])
        #expect(peers.first?.rssi == -50)
        #expect(matched.withLock { $0 } == ["C0:11:22:33:44:55"])
        let start = try #require(started.withLock { $0.first })
        #expect(start.adapter == "hci0" && start.throughBluetoothd && start.backend.contains("bluez"))
        #expect(fake.record.stops.withLock { $0 } == 1, "the discovery session ends with the scan")
    }

    @Test("scan by criteria: each peer as ScannedPeer, with its services and estimated distance")
    func scanByCriteria() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let found = Mutex<[ScannedPeer]>([])
        let criteria = try ScanCriteria(name: "msgpipe-peer", referencePower: 50, attenuation: 2)
        let peers = try await MessagePipe.scan(
            adapter: "hci0", backend: .bluez, for: .seconds(3), matching: criteria, busAddress: bus.address,
            onFound: { peer in found.withLock { $0.append(peer) } })
        let peer = try #require(peers.first)
        #expect(peers.count == 1 && found.withLock { $0 } == peers)
        #expect(peer.peer.address.description == "C0:11:22:33:44:55" && peer.name == "msgpipe-peer" && peer.rssi == -50)
        #expect(peer.distanceMetres == 1, "|RSSI| equal to A is 1 m")
        #expect(peer.services.count == 1 && peer.services.first?.count == 36, "the 128-bit service UUID as text")
    }

    @Test("a filter that matches nobody returns no peer")
    func nobodyMatches() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let peers = try await MessagePipe.scan(
            adapter: "hci0", backend: .bluez, for: .milliseconds(300), filter: ScanFilter(name: "someone-else"),
            busAddress: bus.address)
        #expect(peers.isEmpty)
    }

    @Test("bluez without bluetoothd on the bus: the error names the remedy")
    func withoutBluetoothd() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        await #expect(throws: BlueZError.notRunning) {
            _ = try await MessagePipe.scan(backend: .bluez, for: .milliseconds(100), busAddress: bus.address)
        }
    }
}
