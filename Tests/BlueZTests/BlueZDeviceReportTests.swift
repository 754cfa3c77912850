import BLELink
import BlueZLink
import SDBus
import Testing

/// Device1 properties → the kernel scanner's ``DiscoveredPeer``: types checked, every value bounded.
struct BlueZDeviceReportTests {
    static let path = "/org/bluez/hci0/dev_C0_11_22_33_44_55"

    /// Eight hex digits, zero-padded.
    static func hex8(_ value: Int) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    @Test func thePathGivesTheAddressUntilThePropertiesSayMore() throws {
        let peer = try #require(DiscoveredPeer(bluezDevice: Self.path))
        #expect(peer.peer.address.description == "C0:11:22:33:44:55")
        #expect(!peer.wasHeard)
        #expect(DiscoveredPeer(bluezDevice: "/org/bluez/hci0") == nil)
        #expect(DiscoveredPeer(bluezDevice: "/org/bluez/hci0/dev_XX") == nil)
    }

    @Test func propertiesMergeWithTypesCheckedAndUUIDsShortened() throws {
        var peer = try #require(DiscoveredPeer(bluezDevice: Self.path))
        peer.merge(bluezDevice: [
            "AddressType": .string("random"), "Name": .string("thermo"), "RSSI": .int16(-300),
            "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb", "12345678-0000-1000-8000-00805f9b34fb",
                               "4d500001-8c5d-4e2b-9f1a-6d7367706970", "not a uuid"]),
            "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [
                DBusDictionaryEntry(key: .uint16(0x0059), value: .variant(.bytes([1, 2]))),
                DBusDictionaryEntry(key: .uint16(0x004C), value: .variant(.string("wrong type"))),
            ]),
        ])
        #expect(peer.peer.type == .leRandom)
        #expect(peer.name == "thermo")
        #expect(peer.rssi == -128)
        #expect(peer.wasHeard)
        #expect(peer.services.map(\.description) == ["180D", "12345678", "4D500001-8C5D-4E2B-9F1A-6D7367706970"])
        #expect(peer.manufacturerData == [0x0059: [1, 2]])
        // Changed properties only: the rest stays; a wrong type is ignored.
        peer.merge(bluezDevice: ["RSSI": .int16(-40), "Name": .uint32(7)])
        #expect(peer.rssi == -40)
        #expect(peer.name == "thermo")
    }

    @Test func anAliasThatIsOnlyTheAddressIsNoName() throws {
        var peer = try #require(DiscoveredPeer(bluezDevice: Self.path))
        peer.merge(bluezDevice: ["Alias": .string("C0-11-22-33-44-55")])
        #expect(peer.name == nil)
        peer.merge(bluezDevice: ["Alias": .string("kitchen")])
        #expect(peer.name == "kitchen")
    }

    @Test func everyPeerValueIsBounded() throws {
        var peer = try #require(DiscoveredPeer(bluezDevice: Self.path))
        let entries = (0..<100).map { DBusDictionaryEntry(key: .uint16(UInt16($0)), value: .variant(.bytes([UInt8($0)]))) }
        peer.merge(bluezDevice: [
            "Name": .string(String(repeating: "é", count: 200)),  // 400 UTF-8 bytes
            "UUIDs": .strings((0..<500).map { Self.hex8($0) + "-0000-1000-8000-00805f9b34fb" }),
            "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", entries + [
                DBusDictionaryEntry(key: .uint16(0xFFFF), value: .variant(.bytes(Array(repeating: 0, count: 5000)))),
            ]),
        ])
        #expect(peer.name?.utf8.count == 248)
        #expect(peer.services.count == DiscoveredPeer.bluezLimits.services)
        #expect(peer.manufacturerData.count == DiscoveredPeer.manufacturerDataLimit.entries)
        #expect(peer.manufacturerData[0xFFFF] == nil)
    }
}
