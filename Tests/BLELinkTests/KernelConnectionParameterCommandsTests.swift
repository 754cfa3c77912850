import GATT
import Testing
@testable import BLELink

/// Byte vectors for the management commands that choose LE connection parameters and the PHY (BlueZ
/// doc/mgmt-api.txt: Load Connection Parameters, Read/Set Default System Configuration, Get/Set PHY
/// Configuration), both directions, with every truncation refused.
struct KernelConnectionParameterCommandsTests {
    static let peer = BluetoothPeer(address: BluetoothAddress("AA:BB:CC:DD:EE:FF")!, type: .leRandom)
    static let fast = try! ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 200)

    @Test func loadConnectionParametersLaysOutFifteenBytesPerPeer() throws {
        let command = LoadConnectionParameters([.init(peer: Self.peer, parameters: Self.fast)]).command(1)
        let expected: [UInt8] = [
            0x35, 0x00, 0x01, 0x00, 0x11, 0x00,  // opcode 0x0035, hci1, 17 parameter bytes
            0x01, 0x00,  // Param_Count
            0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x02,  // Address (little-endian), LE Random
            0x06, 0x00, 0x0C, 0x00,  // Min 6 (7.5 ms), Max 12 (15 ms)
            0x00, 0x00, 0xC8, 0x00,  // Latency 0, Timeout 200 (2 s)
        ]
        #expect(command.encoded() == expected)
        let decoded = try LoadConnectionParameters(decoding: command.parameters[...])
        #expect(decoded.entries == [.init(peer: Self.peer, parameters: Self.fast)])
        for length in 0 ..< command.parameters.count {
            #expect(throws: BluetoothError.self) { try LoadConnectionParameters(decoding: command.parameters.prefix(length)) }
        }
    }

    @Test func loadConnectionParametersRefusesValuesTheSpecificationForbids() {
        // Timeout 100 ms with a 50 ms interval: not longer than (1 + 0) x 50 x 2.
        let bytes: [UInt8] = [0x01, 0x00, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x01, 0x28, 0x00, 0x28, 0x00, 0x00, 0x00, 0x0A, 0x00]
        #expect(throws: BluetoothError.self) { try LoadConnectionParameters(decoding: bytes[...]) }
        var bredr = bytes
        bredr[8] = 0x00
        bredr[15] = 0x64
        #expect(throws: BluetoothError.self) { try LoadConnectionParameters(decoding: bredr[...]) }
    }

    @Test func setDefaultSystemConfigurationCarriesTheFourLEConnectionTLVs() throws {
        let command = SetDefaultSystemConfiguration(connection: Self.fast).command(0)
        #expect(command.encoded() == [
            0x4C, 0x00, 0x00, 0x00, 0x14, 0x00,  // opcode 0x004C, hci0, 20 parameter bytes
            0x17, 0x00, 0x02, 0x06, 0x00,  // LE Min Connection Interval = 6
            0x18, 0x00, 0x02, 0x0C, 0x00,  // LE Max Connection Interval = 12
            0x19, 0x00, 0x02, 0x00, 0x00,  // LE Connection Latency = 0
            0x1A, 0x00, 0x02, 0xC8, 0x00,  // LE Supervision Timeout = 200
        ])
        #expect(try SetDefaultSystemConfiguration(decoding: command.parameters[...]) == SetDefaultSystemConfiguration(connection: Self.fast))
    }

    @Test func setDefaultSystemConfigurationCanCarryTheIntervalRangeAlone() throws {
        let command = SetDefaultSystemConfiguration(intervalMinimum: 6, intervalMaximum: 3_200).command(0)
        #expect(command.encoded() == [
            0x4C, 0x00, 0x00, 0x00, 0x0A, 0x00,  // opcode 0x004C, hci0, 10 parameter bytes
            0x17, 0x00, 0x02, 0x06, 0x00,  // LE Min Connection Interval = 6 (7.5 ms)
            0x18, 0x00, 0x02, 0x80, 0x0C,  // LE Max Connection Interval = 3200 (4 s)
        ])
        #expect(try SetDefaultSystemConfiguration(decoding: command.parameters[...])
            == SetDefaultSystemConfiguration(intervalMinimum: 6, intervalMaximum: 3_200))
    }

    @Test func readDefaultSystemConfigurationDecodesTheKernelsTLVs() throws {
        #expect(ReadDefaultSystemConfiguration.command(2).encoded() == [0x4B, 0x00, 0x02, 0x00, 0x00, 0x00])
        // A reply as mgmt_config.c builds it: other TLVs around the LE connection ones (Linux defaults).
        let reply: [UInt8] = [
            0x00, 0x00, 0x02, 0x00, 0x00,  // BR/EDR Page Scan Type
            0x16, 0x00, 0x02, 0x30, 0x00,  // LE Scan Window for connect
            0x17, 0x00, 0x02, 0x18, 0x00,  // 24 = 30 ms
            0x18, 0x00, 0x02, 0x28, 0x00,  // 40 = 50 ms
            0x19, 0x00, 0x02, 0x00, 0x00,
            0x1A, 0x00, 0x02, 0x2A, 0x00,  // 42 = 420 ms
            0x1B, 0x00, 0x02, 0xD0, 0x07,  // LE Autoconnect Timeout, 2000 ms
        ]
        let decoded = try ReadDefaultSystemConfiguration.Reply(decoding: reply[...])
        #expect(decoded.parameters.count == 7)
        #expect(decoded.value(0x001B) == 2_000)
        #expect(try decoded.connectionParameters() == ConnectionParameters.linuxDefault)
        for length in [1, 2, 4, 6, reply.count - 1] {
            #expect(throws: BluetoothError.self) { try ReadDefaultSystemConfiguration.Reply(decoding: reply.prefix(length)) }
        }
        #expect(try ReadDefaultSystemConfiguration.Reply(decoding: reply.prefix(10)).connectionParameters() == nil)
        var broken = reply
        broken[18] = 0x05  // maximum 5: below 7.5 ms
        #expect(throws: ConnectionParametersError.intervalOutOfRange("6.25")) {
            try ReadDefaultSystemConfiguration.Reply(decoding: broken[...]).connectionParameters()
        }
    }

    /// A Bluetooth 5 controller: every PHY supported; BR 1M 1-slot and LE 1M fixed; BR/EDR and LE 1M selected.
    static let bluetooth5 = GetPHYConfiguration.Reply(
        supported: ManagementPHYs(rawValue: 0x7FFF), configurable: ManagementPHYs(rawValue: 0x79FE),
        selected: ManagementPHYs(rawValue: 0x07FF))

    @Test func getPHYConfigurationDecodesThreeMasks() throws {
        #expect(GetPHYConfiguration.command(0).encoded() == [0x44, 0x00, 0x00, 0x00, 0x00, 0x00])
        let bytes: [UInt8] = [0xFF, 0x7F, 0x00, 0x00, 0xFE, 0x79, 0x00, 0x00, 0xFF, 0x07, 0x00, 0x00]
        #expect(try GetPHYConfiguration.Reply(decoding: bytes[...]) == Self.bluetooth5)
        var out: [UInt8] = []
        Self.bluetooth5.encode(into: &out)
        #expect(out == bytes)
        for length in 0 ..< bytes.count {
            #expect(throws: BluetoothError.self) { try GetPHYConfiguration.Reply(decoding: bytes.prefix(length)) }
        }
    }

    @Test(arguments: [
        (LEPHY.le2M, [0x45, 0x00, 0x00, 0x00, 0x04, 0x00, 0xFF, 0x1F, 0x00, 0x00] as [UInt8]),  // + LE 2M TX/RX
        (.coded, [0x45, 0x00, 0x00, 0x00, 0x04, 0x00, 0xFF, 0x67, 0x00, 0x00]),  // + LE Coded TX/RX
        (.le1M, [0x45, 0x00, 0x00, 0x00, 0x04, 0x00, 0xFF, 0x07, 0x00, 0x00]),  // LE 1M only
    ])
    func setPHYConfigurationKeepsBREDRAndLE1MAndAddsThePreference(phy: LEPHY, bytes: [UInt8]) throws {
        var current = Self.bluetooth5
        current.selected.formUnion([.le2MTransmit, .le2MReceive])  // a 2M selection is replaced, not kept
        let preference = try SetPHYConfiguration(preferring: phy, current: current)
        let command = preference.command(0)
        #expect(command.encoded() == bytes)
        #expect(try SetPHYConfiguration(decoding: command.parameters[...]) == preference)
        #expect(throws: BluetoothError.self) { try SetPHYConfiguration(decoding: command.parameters.prefix(3)) }
    }

    @Test func aPHYTheControllerLacksIsNotSupported() {
        let noCoded = GetPHYConfiguration.Reply(
            supported: ManagementPHYs(rawValue: 0x1FFF), configurable: ManagementPHYs(rawValue: 0x19FE),
            selected: ManagementPHYs(rawValue: 0x07FF))
        #expect(throws: BluetoothError.self) { try SetPHYConfiguration(preferring: .coded, current: noCoded) }
        do {
            _ = try SetPHYConfiguration(preferring: .coded, current: noCoded)
        } catch {
            #expect(error.description.contains("PHY coded is not supported here"), "\(error)")
        }
    }

    @Test func refusalsBecomeTypedErrorsThatSayWhatIsNeeded() {
        let command = SetDefaultSystemConfiguration(connection: Self.fast).command(0)
        func mapped(_ status: UInt8) -> BluetoothError {
            ManagementSocket.connectionParameterError(
                ManagementSocket.error(for: command, status: ManagementStatus(rawValue: status)), command: command,
                kernel: "Linux 5.8 or later")
        }
        #expect(mapped(0x14) == .permissionDenied(operation: "Set Default System Configuration on hci0"))
        #expect(mapped(0x14).description.contains("CAP_NET_ADMIN"))
        #expect(mapped(0x01).description
            == "Set Default System Configuration on hci0 is not supported here: this kernel does not know the command; it needs Linux 5.8 or later")
        guard case .notSupported = mapped(0x0C) else { Issue.record("Not Supported: \(mapped(0x0C))"); return }
        guard case .notSupported = mapped(0x0D) else { Issue.record("Invalid Parameters: \(mapped(0x0D))"); return }
        #expect(mapped(0x03) == .commandFailed(command: "Set Default System Configuration on hci0", status: ManagementStatus(rawValue: 0x03)))
        #expect(mapped(0x0F) == .adapterDown(adapter: "hci0"))
    }
}
