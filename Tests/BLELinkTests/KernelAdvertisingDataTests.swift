import MemoryLinks
import Testing
@testable import BLELink

/// AD / EIR structures: decoding, malformed input, encoding limits.
struct KernelAdvertisingDataTests {
    static let service128 = AdvertisedServiceUUID("12345678-1234-5678-1234-56789ABCDEF0")!

    @Test func decodesFlagsNameAndAllUUIDWidths() throws {
        let bytes: [UInt8] = [0x02, 0x01, 0x06,
                              0x05, 0x03, 0x0D, 0x18, 0x0F, 0x18,
                              0x05, 0x05, 0x78, 0x56, 0x34, 0x12,
                              0x11, 0x07] + Self.service128.littleEndianBytes + [
                              0x04, 0x09, 0x6D, 0x73, 0x67]
        let data = try AdvertisingData(decoding: bytes[...])
        #expect(data.flags == 0x06)
        #expect(data.localName == "msg")
        #expect(try data.serviceUUIDs().map(\.description) == [
            "180D", "180F", "12345678", "12345678-1234-5678-1234-56789ABCDEF0",
        ])
    }

    @Test func completeNameWinsOverShortenedName() throws {
        let data = try AdvertisingData(decoding: [0x03, 0x08, 0x61, 0x62, 0x04, 0x09, 0x61, 0x62, 0x63][...])
        #expect(data.localName == "abc")
    }

    @Test func zeroLengthEndsTheSignificantPart() throws {
        let data = try AdvertisingData(decoding: [0x02, 0x01, 0x06, 0x00, 0xFF, 0xFF][...])
        #expect(data.structures == [.init(type: 0x01, data: [0x06])])
    }

    @Test(arguments: [
        [0x05, 0x09, 0x61] as [UInt8],  // length runs past the end
        [0x02, 0x01, 0x06, 0x1F],  // a trailing length byte with nothing after it
        [0xFF],
    ])
    func lengthPastTheEndIsATypedError(bytes: [UInt8]) {
        #expect(throws: BluetoothError.self) { try AdvertisingData(decoding: bytes[...]) }
    }

    @Test func uuidListThatIsNotAMultipleOfItsWidthIsATypedError() throws {
        let data = try AdvertisingData(decoding: [0x04, 0x03, 0x0D, 0x18, 0x0F][...])
        #expect(throws: BluetoothError.malformedAdvertisingData(
            "service UUID list (type 0x3) of 3 bytes is not a multiple of 2")) { try data.serviceUUIDs() }
    }

    @Test func everyTruncationEitherDecodesAPrefixOrThrows() {
        let bytes: [UInt8] = [0x02, 0x01, 0x06, 0x11, 0x07] + Self.service128.littleEndianBytes
        for end in 0...bytes.count {
            let slice = bytes[..<end]
            let expectFailure = end > 3 && end < bytes.count || end == 1 || end == 2
            if expectFailure {
                #expect(throws: BluetoothError.self) { try AdvertisingData(decoding: slice) }
            } else {
                #expect(throws: Never.self) { try AdvertisingData(decoding: slice) }
            }
        }
    }

    @Test func randomBytesNeverTrapTheDecoder() {
        var random = SplitMix64(seed: 0xAD_0002)
        for _ in 0..<5000 {
            let bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next() % 24) }
            if let data = try? AdvertisingData(decoding: bytes[...]) {
                _ = data.localName
                _ = try? data.serviceUUIDs()
            }
        }
    }

    @Test func encodingRoundTrips() throws {
        let data = AdvertisingData(structures: [.init(type: 0x01, data: [0x06]), .init(type: 0x09, data: [0x41])])
        let bytes = try data.encoded()
        #expect(bytes == [0x02, 0x01, 0x06, 0x02, 0x09, 0x41])
        #expect(try AdvertisingData(decoding: bytes[...]) == data)
    }

    @Test func encodingRefusesMoreThanTheLimit() {
        let data = AdvertisingData.serviceList(Self.service128)
        #expect(throws: BluetoothError.self) { try data.encoded(limit: 17) }
        #expect(throws: Never.self) { try data.encoded(limit: 18) }
    }

    @Test func longNamesAreShortenedAtACharacterBoundary() {
        let name = String(repeating: "é", count: 20)  // 40 UTF-8 bytes
        let data = AdvertisingData.localName(name)
        #expect(data.structures.first?.type == AdvertisingData.ADType.shortenedLocalName.rawValue)
        #expect(data.structures.first?.data.count == 28)
        #expect(data.localName == String(repeating: "é", count: 14))
        #expect(AdvertisingData.localName("msgpipe").structures.first?.type == 0x09)
    }

    @Test func scanFilterMatchesServiceAcrossWidthsAndExactName() {
        let peer = DiscoveredPeer(
            peer: BluetoothPeer(address: .any), name: "msgpipe", rssi: -50,
            services: [AdvertisedServiceUUID(uuid16: 0x180D)])
        #expect(ScanFilter(service: AdvertisedServiceUUID("0000180D-0000-1000-8000-00805F9B34FB")).matches(peer))
        #expect(ScanFilter(service: AdvertisedServiceUUID("180D"), name: "msgpipe").matches(peer))
        #expect(!ScanFilter(name: "msg").matches(peer))
        #expect(!ScanFilter(service: Self.service128).matches(peer))
        #expect(ScanFilter().matches(peer))
    }

    @Test func malformedAdvertisingDataKeepsThePeerWithoutTrapping() {
        let found = DeviceFound(peer: BluetoothPeer(address: .any), rssi: -70, eir: [0x09, 0x09, 0x41])
        let peer = DiscoveredPeer(found)
        #expect(peer.rssi == -70)
        #expect(peer.name == nil)
    }
}
