import BLELink
import BlueZLink
import SDBus
import GATT
import Glibc
import MsgPipe
import Testing

/// The central through bluetoothd and the peripheral's L2CAP channel: the PSM is read over D-Bus at connect,
/// and the link mode decides whether a connection without a usable channel goes on over GATT or fails.
/// (This host has no Bluetooth, so every channel open here fails: the lab opens real ones.)
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .timeLimit(.minutes(1)))
struct BlueZCentralChannelTests {
    static func peripheral(psm: [UInt8]?) -> FakeBlueZRemote.Device {
        var device = BlueZCentralTests.peripheral
        device.psmValue = psm
        return device
    }

    @Test func thePublishedPSMAndTheAdapterAddressComeWithTheConnection() async throws {
        try await BlueZCentralTests.withFake { fake, client in
            try await fake.add(Self.peripheral(psm: [0x85, 0x00]))
            let connection = try await BlueZCentral.connect(
                bus: client, target: .peer(BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom)),
                profile: .msgpipe, timeout: .seconds(20))
            #expect(connection.channelPSM == 0x85)
            #expect(connection.adapterAddress == BluetoothAddress("00:11:22:33:44:55"))
            #expect(connection.peer.type == .leRandom)
            await connection.disconnect()
        }
    }

    /// No characteristic, a PSM of 0, one no LE channel can have (0x100) and a value too short: no channel.
    @Test(arguments: [nil, [0x00, 0x00], [0x00, 0x01], [0x85]] as [[UInt8]?])
    func aValueThatNamesNoLEPSMIsNoChannel(value: [UInt8]?) async throws {
        try await BlueZCentralTests.withFake { fake, client in
            try await fake.add(Self.peripheral(psm: value))
            let connection = try await BlueZCentral.connect(
                bus: client, target: .peer(BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom)),
                profile: .msgpipe, timeout: .seconds(20))
            #expect(connection.channelPSM == nil)
            await connection.disconnect()
        }
    }

    @Test func linkModeL2CAPFailsWithoutAPublishedChannelAndHangsUp() async throws {
        try await BlueZCentralTests.withFake { fake, client in
            try await fake.add(Self.peripheral(psm: nil))
            let link = BlueZCentralLink(bus: client, adapter: FakeBlueZRemote.adapter, mode: .l2cap)
            await #expect(throws: MessagePipeError.channelUnavailable("the peripheral publishes no channel PSM")) {
                _ = try await link.connect(.name("msgpipe-peer"), profile: .msgpipe, timeout: .seconds(20))
            }
            #expect(fake.record.disconnects.withLock { $0 } == 1)
            await link.close()
        }
    }

    @Test func linkModeL2CAPFailsWhenThePublishedChannelDoesNotOpen() async throws {
        try await BlueZCentralTests.withFake { fake, client in
            try await fake.add(Self.peripheral(psm: [0x85, 0x00]))
            let link = BlueZCentralLink(bus: client, adapter: FakeBlueZRemote.adapter, mode: .l2cap)
            let error = await #expect(throws: MessagePipeError.self) {
                _ = try await link.connect(.name("msgpipe-peer"), profile: .msgpipe, timeout: .seconds(20))
            }
            guard case let .channelUnavailable(reason)? = error else {
                Issue.record("expected channelUnavailable, got \(String(describing: error))")
                return
            }
            #expect(reason.hasPrefix("PSM 0x85: "), "\(reason)")
            #expect(fake.record.disconnects.withLock { $0 } == 1)
            await link.close()
        }
    }

    /// Link mode auto: a channel that does not open leaves the connection on GATT; link mode gatt never tries
    /// the channel. Either way GATT carries the packets.
    @Test(arguments: [
        (LinkMode.auto, "gatt (the channel failed: PSM 0x85: "),
        (LinkMode.gatt, "gatt"),
    ])
    func withoutAChannelGATTCarriesThePackets(mode: LinkMode, carrierPrefix: String) async throws {
        try await BlueZCentralTests.withFake { fake, client in
            try await fake.add(Self.peripheral(psm: [0x85, 0x00]))
            let link = BlueZCentralLink(bus: client, adapter: FakeBlueZRemote.adapter, mode: mode)
            let (_, carrier) = try await link.connect(.name("msgpipe-peer"), profile: .msgpipe, timeout: .seconds(20))
            #expect(carrier.hasPrefix(carrierPrefix), "\(carrier)")
            #expect(mode != .gatt || carrier == "gatt", "\(carrier)")
            #expect(link.carrier == .gatt)
            var events = link.relay.events.makeAsyncIterator()
            guard case .connected? = await events.next() else {
                Issue.record("the relay did not connect")
                return
            }
            try await link.relay.send([1, 2, 3])
            let end = try #require(fake.record.writeEnd.withLock { $0 })
            var buffer = [UInt8](repeating: 0, count: 16)
            #expect(read(end, &buffer, buffer.count) == 3)
            await link.close()
        }
    }
}
