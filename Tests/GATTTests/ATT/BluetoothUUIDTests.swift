@testable import GATT
import Testing
import TestSupport

@Suite struct BluetoothUUIDTests {
    @Test func sixteenBitShorthandExpandsOverTheBaseUUID() {
        let battery = BluetoothUUID("180F")
        #expect(battery == .bit16(0x180F))
        #expect(battery == BluetoothUUID("0000180f-0000-1000-8000-00805f9b34fb"))
        #expect(battery?.bit16 == 0x180F)
        #expect(battery?.description == "180F")
    }

    @Test func oneHundredTwentyEightBitUUIDIsLittleEndianOnTheWire() {
        var out: [UInt8] = []
        service128.encode(into: &out)
        #expect(out == bytes(service128Bytes))
        #expect(service128.wireLength == 16)
        #expect(service128.description == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(BluetoothUUID(littleEndian: out[...]) == service128)
    }

    @Test func sixteenBitUUIDTakesTwoBytes() {
        var out: [UInt8] = []
        BluetoothUUID.primaryService.encode(into: &out)
        #expect(out == [0x00, 0x28])
    }

    @Test(arguments: ["", "18F", "180FF", "XYZW", "+18F", "+E400001-B5A3-F393-E0A9-E50E24DCCA9E", "6E400001-B5A3-F393-E0A9", "6E400001B5A3F393E0A9E50E24DCCA9E",
                      "6E400001-B5A3-F393-E0A9-E50E24DCCA9G", "6E40000-1B5A3-F393-E0A9-E50E24DCCA9E"])
    func rejectsMalformedStrings(_ string: String) {
        #expect(BluetoothUUID(string) == nil)
    }
}
