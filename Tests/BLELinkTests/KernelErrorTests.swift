import Glibc
import Testing
@testable import BLELink

/// The kernel binding's errors: what the user reads, and the EAFNOSUPPORT path on a kernel without Bluetooth.
struct KernelErrorTests {
    /// True when this kernel has no Bluetooth at all (the development and CI machines): no module loaded
    /// and no built-in one.
    static let kernelLacksBluetooth = access("/sys/module/bluetooth", F_OK) != 0
        && access("/sys/class/bluetooth", F_OK) != 0

    @Test(.enabled(if: kernelLacksBluetooth, "needs a kernel without Bluetooth"))
    func everyEntryPointReportsAKernelWithoutBluetooth() {
        #expect(throws: BluetoothError.kernelWithoutBluetooth) { try ManagementSocket() }
        #expect(throws: BluetoothError.kernelWithoutBluetooth) {
            _ = try ATTListener(address: .any, adapterName: "hci0")
        }
        #expect(throws: BluetoothError.kernelWithoutBluetooth) {
            _ = try ATTConnector.connect(
                from: .any, adapterName: "hci0", to: BluetoothPeer(address: .any), timeout: .seconds(1))
        }
        #expect(throws: BluetoothError.kernelWithoutBluetooth) {
            try BLECentral(adapter: .firstAvailable)
        }
    }

    @Test func kernelWithoutBluetoothNamesBothRemedies() {
        let text = BluetoothError.kernelWithoutBluetooth.description
        #expect(text.contains("this kernel has no Bluetooth support"))
        #expect(text.contains("sudo modprobe bluetooth"))
        #expect(text.contains("a kernel built with Bluetooth"))
        #expect(!text.contains("Scripts/"), "users of the library or the package have no repository scripts")
    }

    @Test(arguments: [
        (EAFNOSUPPORT, BluetoothError.kernelWithoutBluetooth),
        (EPERM, .permissionDenied(operation: "bind")),
        (EACCES, .permissionDenied(operation: "bind")),
        (EADDRINUSE, .attChannelInUse(adapter: "hci0")),
        (ENODEV, .noAdapter(selector: "hci0")),
        (ENETDOWN, .adapterDown(adapter: "hci0")),
    ])
    func errnoMapsToTheActionableError(code: Int32, expected: BluetoothError) {
        #expect(bluetoothError("bind", errno: code, adapter: "hci0") == expected)
    }

    @Test func otherErrnoKeepsTheCallAndMessage() {
        #expect(bluetoothError("connect", errno: EHOSTUNREACH).description.contains("connect failed: No route to host"))
    }

    @Test(arguments: [
        (BluetoothError.permissionDenied(operation: "x"), "CAP_NET_ADMIN"),
        (.attChannelInUse(adapter: "hci0"), "stop bluetoothd"),
        (.adapterDown(adapter: "hci1"), "btmgmt --index 1 power on"),
        (.noAdapter(selector: "hci7"), "no Bluetooth adapter matches 'hci7'"),
        (.lowEnergyDisabled(adapter: "hci0"), "btmgmt --index 0 le on"),
        (.connectTimedOut(peer: "00:AA:01:00:00:00 (public)", timeout: .seconds(5)), "advertising connectable"),
    ])
    func descriptionsCarryTheRemedy(error: BluetoothError, phrase: String) {
        #expect(error.description.contains(phrase))
    }
}

/// Detecting another listener on the ATT channel from the kernel's debugfs L2CAP table.
struct KernelATTChannelOwnerTests {
    static let address = BluetoothAddress("00:AA:01:00:00:00")!

    @Test func listenerOnTheAdapterOrOnAnyAddressHoldsTheChannel() {
        let own = "00:AA:01:00:00:00 (1) 00:00:00:00:00:00 (0) 4 0 0x0004 0x0000 672 0 1 0\n"
        let any = "00:00:00:00:00:00 (1) 00:00:00:00:00:00 (0) 4 0 0x0004 0x0000 672 0 1 0\n"
        #expect(ATTChannelOwner.tableHasListener(own, on: Self.address))
        #expect(ATTChannelOwner.tableHasListener(any, on: Self.address))
    }

    @Test func connectedChannelsOtherCIDsAndOtherAdaptersDoNot() {
        let table = """
            00:AA:01:00:00:00 (1) 00:AA:01:01:00:01 (1) 1 0 0x0004 0x0004 672 23 1 0
            00:AA:01:00:00:00 (1) 00:00:00:00:00:00 (0) 4 128 0x0040 0x0000 672 0 1 0
            00:AA:01:01:00:01 (1) 00:00:00:00:00:00 (0) 4 0 0x0004 0x0000 672 0 1 0
            garbage
            """
        #expect(!ATTChannelOwner.tableHasListener(table, on: Self.address))
        #expect(!ATTChannelOwner.tableHasListener("", on: Self.address))
    }
}
