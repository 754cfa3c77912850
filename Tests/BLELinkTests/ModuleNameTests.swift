import Testing
import BLELink

/// No type in BLELink may be named like the module: `BLELink.X` must name the module's `X`.
@Test func moduleQualifiedNamesReachTheModulesTypes() {
    #expect(BLELink.BluetoothAddress("00:AA:01:00:00:00") == BluetoothAddress("00:AA:01:00:00:00"))
}
