import CBluetooth
import Testing
@testable import BLELink

/// Addresses, UUIDs, selectors, sockaddr_l2, distance and backoff: the pure parts of the kernel binding.
struct KernelAddressingTests {
    @Test func addressParsesAndPrintsMostSignificantByteFirst() throws {
        let address = try #require(BluetoothAddress("00:aa:01:02:03:F4"))
        #expect(address.littleEndianBytes == [0xF4, 0x03, 0x02, 0x01, 0xAA, 0x00])
        #expect(address.description == "00:AA:01:02:03:F4")
    }

    @Test(arguments: ["", "00:AA:01:02:03", "00:AA:01:02:03:04:05", "0:AA:01:02:03:04", "GG:AA:01:02:03:04", "00-AA-01-02-03-04",
                            "+1:-0:+F:00:00:00", "00:AA:01:02:03:-4"])
    func malformedAddressesAreRejected(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func uuidParsesAllWidthsAndExpandsShortOnes() throws {
        let short = try #require(AdvertisedServiceUUID("180d"))
        #expect(short.littleEndianBytes == [0x0D, 0x18])
        #expect(AdvertisedServiceUUID("0000180D-0000-1000-8000-00805F9B34FB")?.matches(short) == true)
        let long = try #require(AdvertisedServiceUUID("12345678123456781234567890abcdef"))
        #expect(long.description == "12345678-1234-5678-1234-567890ABCDEF")
        #expect(long.littleEndianBytes.first == 0xEF)
        #expect(AdvertisedServiceUUID("123") == nil)
        #expect(AdvertisedServiceUUID("xyz0") == nil)
    }

    @Test(arguments: [
        ("hci0", AdapterSelector.index(0)), ("3", .index(3)),
        ("00:AA:01:00:00:00", .address(BluetoothAddress("00:AA:01:00:00:00")!)),
    ])
    func adapterSelectorParses(text: String, expected: AdapterSelector) throws {
        #expect(try AdapterSelector(text) == expected)
    }

    @Test func adapterSelectorDefaultsAndRejects() throws {
        #expect(try AdapterSelector(nil) == .firstAvailable)
        #expect(throws: BluetoothError.self) { try AdapterSelector("hcix") }
        #expect(throws: BluetoothError.self) { try AdapterSelector("hci65535") }
    }

    @Test func centralTargetIsAnAddressWithOptionalTypeOrAName() {
        let address = BluetoothAddress("00:AA:01:00:00:00")!
        #expect(CentralTarget("00:AA:01:00:00:00") == .peer(BluetoothPeer(address: address, type: .lePublic)))
        #expect(CentralTarget("00:AA:01:00:00:00/random") == .peer(BluetoothPeer(address: address, type: .leRandom)))
        #expect(CentralTarget("msgpipe-lab") == .name("msgpipe-lab"))
    }

    @Test func sockaddrL2TargetsTheATTChannelWithTheLEAddressType() {
        let address = BluetoothAddress("00:AA:01:00:00:01")!
        let socketAddress = L2CAPSocketAddress.make(address: address, type: .lePublic)
        #expect(socketAddress.l2_family == sa_family_t(AF_BLUETOOTH))
        #expect(UInt16(littleEndian: socketAddress.l2_cid) == 4)
        #expect(socketAddress.l2_psm == 0)
        #expect(socketAddress.l2_bdaddr_type == UInt8(BDADDR_LE_PUBLIC))
        let b = socketAddress.l2_bdaddr.b
        #expect([b.0, b.1, b.2, b.3, b.4, b.5] == [0x01, 0x00, 0x00, 0x01, 0xAA, 0x00])
        #expect(L2CAPSocketAddress.peer(of: socketAddress) == BluetoothPeer(address: address, type: .lePublic))
        #expect(L2CAPSocketAddress.make(address: address, type: .leRandom).l2_bdaddr_type == UInt8(BDADDR_LE_RANDOM))
    }

    @Test func securityLevelsMapToTheKernelConstants() {
        #expect(L2CAPSecurityLevel.allCases.map(\.kernelValue) == [
            UInt8(BT_SECURITY_LOW), UInt8(BT_SECURITY_MEDIUM), UInt8(BT_SECURITY_HIGH),
        ])
    }

    @Test(arguments: [(Int8(-59), 1.0), (-79, 10.0), (-39, 0.1), (-69, 3.1622776601683795)])
    func distanceFollowsTheLogDistanceFormula(rssi: Int8, metres: Double) throws {
        let estimate = try #require(DistanceEstimate().metres(rssi: rssi))
        #expect(abs(estimate - metres) < 1e-9 * metres)
    }

    @Test func distanceUsesAAndNAndRefusesUnknownRSSI() throws {
        let estimate = try #require(DistanceEstimate(referencePower: 50, attenuation: 4).metres(rssi: -90))
        #expect(abs(estimate - 10) < 1e-9)
        #expect(DistanceEstimate().metres(rssi: 127) == nil)
        #expect(DistanceEstimate(attenuation: 0).metres(rssi: -60) == nil)
    }

    @Test func defaultBackoffWaitsNothingThenDoublesFromHalfASecondUpToEightSeconds() {
        let delays = (0...7).map { ReconnectBackoff().delay(afterFailures: $0) }
        #expect(delays == [.zero, .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
        #expect(ReconnectBackoff().delay(afterFailures: 1000) == .seconds(8))
        #expect(ReconnectBackoff().delay(afterFailures: .max) == .seconds(8))
    }

    @Test func backoffCapsAtAMaximumThatIsNotAPowerOfTwoOfTheInitialWait() {
        let backoff = ReconnectBackoff(initial: .milliseconds(500), maximum: .seconds(3), attempts: 6)
        #expect((0...6).map { backoff.delay(afterFailures: $0) }
            == [.zero, .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3)])
    }

    @Test func negativeFailureCountsWaitNothing() {
        #expect(ReconnectBackoff().delay(afterFailures: -1) == .zero)
    }

    @Test func durationsInErrorTextReadAsSeconds() {
        #expect(Duration.seconds(20).secondsText == "20 s")
        #expect(Duration.milliseconds(500).secondsText == "0.5 s")
        #expect(Duration.milliseconds(1250).secondsText == "1.25 s")
        #expect(Duration.milliseconds(20).secondsText == "0.02 s")
        #expect(BluetoothError.connectTimedOut(peer: "x", timeout: .seconds(20)).description.contains("within 20 s;"))
    }

    @Test func onlyTransientErrorsAreRetried() {
        #expect(BluetoothError.connectTimedOut(peer: "x", timeout: .seconds(1)).isTransient)
        #expect(BluetoothError.peerNotFound(query: "x", timeout: .seconds(1)).isTransient)
        #expect(!BluetoothError.kernelWithoutBluetooth.isTransient)
        #expect(!BluetoothError.permissionDenied(operation: "x").isTransient)
        #expect(!BluetoothError.adapterDown(adapter: "hci0").isTransient)
    }
}
