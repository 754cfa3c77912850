import Testing
@testable import BLELink

/// Manufacturer and service data in the kernel scanner's reports (the same fields the D-Bus scanner fills).
struct KernelScanReportDataTests {
    @Test func manufacturerAndServiceDataAreKeptPerKey() {
        let eir: [UInt8] = [0x06, 0xFF, 0x4C, 0x00, 0x01, 0x02, 0x03,  // Apple (0x004C): 01 02 03
                            0x05, 0x16, 0xAA, 0xFE, 0x10, 0x20,        // service data 0xFEAA: 10 20
                            0x02, 0xFF, 0x59]                           // too short for a company: ignored
        let peer = DiscoveredPeer(DeviceFound(peer: BluetoothPeer(address: .any), rssi: -60, eir: eir))
        #expect(peer.manufacturerData == [0x004C: [1, 2, 3]])
        #expect(peer.serviceData == [AdvertisedServiceUUID(uuid16: 0xFEAA): [0x10, 0x20]])
    }

    @Test func manufacturerDataEntriesAreBounded() {
        var peer = DiscoveredPeer(peer: BluetoothPeer(address: .any), rssi: -60)
        for company in 0..<100 { peer.setManufacturerData(company: UInt16(company), [1]) }
        peer.setManufacturerData(company: 3, Array(repeating: 0, count: DiscoveredPeer.manufacturerDataLimit.bytes + 1))
        #expect(peer.manufacturerData.count == DiscoveredPeer.manufacturerDataLimit.entries)
        #expect(peer.manufacturerData[3] == [1])
    }
}
