import GATT
import Testing
@testable import BLELink

/// ``ConnectionParameterSetup`` against a recorder in place of the management socket: which commands go out,
/// in which order, with which bytes, and what a refusal becomes.
struct KernelConnectionParameterSetupTests {
    /// Answers each command by opcode (a status byte, or reply bytes) and keeps every command sent.
    final class RecordingManagement: ManagementCommandExecuting {
        var sent: [ManagementCommand] = []
        var replies: [UInt16: [UInt8]] = [:]
        var statuses: [UInt16: ManagementStatus] = [:]

        func execute(_ command: ManagementCommand, timeout: Duration) throws(BluetoothError) -> [UInt8] {
            sent.append(command)
            if let status = statuses[command.opcode] { throw ManagementSocket.error(for: command, status: status) }
            return replies[command.opcode] ?? []
        }

        var opcodes: [UInt16] { sent.map(\.opcode) }
    }

    static let peer = BluetoothPeer(address: BluetoothAddress("AA:BB:CC:DD:EE:FF")!, type: .leRandom)
    /// Read Default System Configuration's reply with Linux's defaults: 30-50 ms, latency 0, 420 ms.
    static let linuxDefaults: [UInt8] = [
        0x17, 0x00, 0x02, 0x18, 0x00, 0x18, 0x00, 0x02, 0x28, 0x00,
        0x19, 0x00, 0x02, 0x00, 0x00, 0x1A, 0x00, 0x02, 0x2A, 0x00,
    ]

    func management(defaults: [UInt8] = linuxDefaults) -> RecordingManagement {
        let management = RecordingManagement()
        management.replies[ReadDefaultSystemConfiguration.opcode] = defaults
        return management
    }

    @Test func aCentralLoadsTheRequestOverTheDefaultsForThePeerBeforeConnecting() throws {
        let management = management()
        let request = try ConnectionParameterRequest(interval: "7.5-15", latency: nil, supervisionTimeout: nil, phy: nil)
        let loaded = try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 1, using: management)
        #expect(loaded == (try ConnectionParameters(minimumInterval: 6, maximumInterval: 12, latency: 0, supervisionTimeout: 42)))
        #expect(management.sent.map { $0.encoded() } == [
            [0x4B, 0x00, 0x01, 0x00, 0x00, 0x00],  // Read Default System Configuration, hci1
            [0x35, 0x00, 0x01, 0x00, 0x11, 0x00, 0x01, 0x00,  // Load Connection Parameters, one entry
             0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x02,  // the peer, LE Random
             0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x2A, 0x00],  // 7.5-15 ms, latency 0, the default 420 ms
        ])
    }

    @Test func aLatencyTheDefaultTimeoutCannotCarryGetsTheShortestTimeoutThatCan() throws {
        let management = management()
        let request = try ConnectionParameterRequest(interval: nil, latency: "10", supervisionTimeout: nil, phy: nil)
        let loaded = try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        // (1 + 10) x 50 ms x 2 = 1100 ms: the shortest longer one is 1110 ms.
        #expect(loaded?.supervisionTimeout == 111)
        #expect(loaded?.maximumInterval == 40)
    }

    @Test func withoutDefaultsInTheReplyLinuxsBuiltInOnesAreUsed() throws {
        let management = management(defaults: [0x00, 0x00, 0x02, 0x00, 0x00])
        let request = try ConnectionParameterRequest(interval: nil, latency: "0", supervisionTimeout: "1000", phy: nil)
        let loaded = try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        #expect(loaded?.minimumInterval == 24)
        #expect(loaded?.maximumInterval == 40)
        #expect(loaded?.supervisionTimeout == 100)
    }

    @Test func aTimeoutTooShortForTheDefaultIntervalIsRefusedNamingTheRule() throws {
        let management = management()
        // 100 ms is not longer than (1 + 0) x 50 ms x 2.
        let request = try ConnectionParameterRequest(interval: nil, latency: nil, supervisionTimeout: "100", phy: nil)
        #expect {
            try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        } throws: { error in
            guard case let .invalidArgument(text) = error as? BluetoothError else { return false }
            return text.contains("must be longer than") && text.contains("use at least 110 ms")
        }
        #expect(management.opcodes == [ReadDefaultSystemConfiguration.opcode])
    }

    @Test func aPHYPreferenceReadsThePHYConfigurationAndSelectsThePHY() throws {
        let management = management()
        // Supported: LE 1M, 2M, Coded; configurable: 2M and Coded; selected: 1M.
        management.replies[GetPHYConfiguration.opcode] = [0x00, 0x7E, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00]
        let request = try ConnectionParameterRequest(interval: nil, latency: nil, supervisionTimeout: nil, phy: "2m")
        let loaded = try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        #expect(loaded == nil)
        #expect(management.sent.map { $0.encoded() } == [
            [0x44, 0x00, 0x00, 0x00, 0x00, 0x00],  // Get PHY Configuration
            [0x45, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x1E, 0x00, 0x00],  // Set PHY Configuration: LE 1M + 2M
        ])
    }

    @Test func theParametersAreLoadedBeforeThePHYIsPreferred() throws {
        let management = management()
        management.replies[GetPHYConfiguration.opcode] = [0x00, 0x7E, 0x00, 0x00, 0x00, 0x78, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00]
        let request = try ConnectionParameterRequest(interval: "15", latency: nil, supervisionTimeout: nil, phy: "coded")
        try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        #expect(management.opcodes == [0x004B, 0x0035, 0x0044, 0x0045])
    }

    @Test func permissionDeniedBecomesTheErrorNamingCapNetAdmin() throws {
        let management = management()
        management.statuses[LoadConnectionParameters.opcode] = .permissionDenied
        let request = try ConnectionParameterRequest(interval: "7.5", latency: nil, supervisionTimeout: nil, phy: nil)
        #expect {
            try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        } throws: { error in
            guard case .connectionParametersNeedCapability = error as? BluetoothError else { return false }
            let text = "\(error)"
            return text.contains("CAP_NET_ADMIN") && text.contains("setcap cap_net_admin+ep")
                && text.contains("AmbientCapabilities=CAP_NET_ADMIN") && text.contains("Load Connection Parameters")
        }
    }

    @Test func aPeripheralWithoutCapNetAdminFailsTooNotOnlyACentral() throws {
        let management = management()
        management.statuses[SetDefaultSystemConfiguration.opcode] = .permissionDenied
        let request = try ConnectionParameterRequest(interval: "30-45", latency: nil, supervisionTimeout: nil, phy: nil)
        #expect(throws: BluetoothError.connectionParametersNeedCapability(
            operation: SetDefaultSystemConfiguration(connection: try request.resolved(over: .linuxDefault)).command(0).description)) {
            try ConnectionParameterSetup.setPeripheralDefaults(request, controller: 0, using: management)
        }
    }

    @Test func aKernelWithoutTheCommandIsNotSupportedNamingTheKernelNeeded() throws {
        let management = management()
        management.statuses[ReadDefaultSystemConfiguration.opcode] = ManagementStatus(rawValue: 0x01)
        let request = try ConnectionParameterRequest(interval: "7.5", latency: nil, supervisionTimeout: nil, phy: nil)
        #expect {
            try ConnectionParameterSetup.prepareConnection(to: Self.peer, request: request, controller: 0, using: management)
        } throws: { error in
            guard case let .notSupported(_, remedy) = error as? BluetoothError else { return false }
            return remedy.contains("Linux 5.8")
        }
    }

    @Test func aPeripheralSetsTheAdapterDefaultsAndCanPutThePreviousOnesBack() throws {
        let management = management()
        let request = try ConnectionParameterRequest(interval: "15-30", latency: "2", supervisionTimeout: "2000", phy: nil)
        let set = try #require(try ConnectionParameterSetup.setPeripheralDefaults(request, controller: 0, using: management))
        #expect(set.previous == .linuxDefault)
        #expect(set.requested == (try ConnectionParameters(minimumInterval: 12, maximumInterval: 24, latency: 2, supervisionTimeout: 200)))
        try ConnectionParameterSetup.restoreDefaults(set.previous, controller: 0, using: management)
        #expect(management.sent.map { $0.encoded() } == [
            [0x4B, 0x00, 0x00, 0x00, 0x00, 0x00],
            [0x4C, 0x00, 0x00, 0x00, 0x14, 0x00,  // Set Default System Configuration: 15-30 ms, latency 2, 2 s
             0x17, 0x00, 0x02, 0x0C, 0x00, 0x18, 0x00, 0x02, 0x18, 0x00,
             0x19, 0x00, 0x02, 0x02, 0x00, 0x1A, 0x00, 0x02, 0xC8, 0x00],
            [0x4C, 0x00, 0x00, 0x00, 0x14, 0x00,  // back to 30-50 ms, latency 0, 420 ms
             0x17, 0x00, 0x02, 0x18, 0x00, 0x18, 0x00, 0x02, 0x28, 0x00,
             0x19, 0x00, 0x02, 0x00, 0x00, 0x1A, 0x00, 0x02, 0x2A, 0x00],
        ])
    }

    @Test func nothingRequestedSendsNothing() throws {
        let management = management()
        #expect(try ConnectionParameterSetup.prepareConnection(
            to: Self.peer, request: ConnectionParameterRequest(), controller: 0, using: management) == nil)
        #expect(try ConnectionParameterSetup.setPeripheralDefaults(ConnectionParameterRequest(), controller: 0, using: management) == nil)
        #expect(management.sent.isEmpty)
    }

    @Test func aPeripheralWithoutAnIntervalWidensTheDefaultRangeAndPutsItBack() throws {
        let management = management()
        let set = try #require(try ConnectionParameterSetup.widenPeripheralInterval(controller: 1, using: management))
        #expect(set.previous == .linuxDefault)
        // 7.5 ms up to 208.75 ms: the longest interval the default 420 ms timeout allows with latency 0.
        #expect(set.widened == (try ConnectionParameters(minimumInterval: 6, maximumInterval: 167, latency: 0, supervisionTimeout: 42)))
        try ConnectionParameterSetup.restoreInterval(set.previous, controller: 1, using: management)
        #expect(management.sent.map { $0.encoded() } == [
            [0x4B, 0x00, 0x01, 0x00, 0x00, 0x00],  // Read Default System Configuration, hci1
            [0x4C, 0x00, 0x01, 0x00, 0x0A, 0x00,  // Set Default System Configuration, hci1, 10 parameter bytes
             0x17, 0x00, 0x02, 0x06, 0x00,  // LE Min Connection Interval = 6 (7.5 ms)
             0x18, 0x00, 0x02, 0xA7, 0x00],  // LE Max Connection Interval = 167 (208.75 ms)
            [0x4C, 0x00, 0x01, 0x00, 0x0A, 0x00,  // back to 30-50 ms; latency and timeout untouched
             0x17, 0x00, 0x02, 0x18, 0x00, 0x18, 0x00, 0x02, 0x28, 0x00],
        ])
    }

    @Test func aRangeAlreadyThatWideIsLeftAlone() throws {
        let wide: [UInt8] = [
            0x17, 0x00, 0x02, 0x06, 0x00, 0x18, 0x00, 0x02, 0x80, 0x0C,  // 7.5 ms - 4 s
            0x19, 0x00, 0x02, 0x00, 0x00, 0x1A, 0x00, 0x02, 0x80, 0x0C,  // latency 0, 32 s
        ]
        let management = management(defaults: wide)
        #expect(try ConnectionParameterSetup.widenPeripheralInterval(controller: 0, using: management) == nil)
        #expect(management.opcodes == [ReadDefaultSystemConfiguration.opcode])
    }

    @Test("the widest range keeps the adapter's latency and timeout valid", arguments: [
        (latency: UInt16(0), timeout: UInt16(42), maximum: UInt16(167)),
        (latency: 4, timeout: 3_200, maximum: 2_559),  // 5 x 3198.75 ms x 2 < 32 s
        (latency: 0, timeout: 3_200, maximum: 3_200),  // 4 s, the longest interval there is
        (latency: 0, timeout: 10, maximum: 39),  // 100 ms: 48.75 ms
    ])
    func widestInterval(latency: UInt16, timeout: UInt16, maximum: UInt16) throws {
        let defaults = try ConnectionParameters(
            minimumInterval: 24, maximumInterval: min(40, maximum), latency: latency, supervisionTimeout: timeout)
        let widest = ConnectionParameterSetup.widestInterval(keeping: defaults)
        #expect(widest.minimumInterval == 6)
        #expect(widest.maximumInterval == maximum)
        #expect(widest.latency == latency && widest.supervisionTimeout == timeout)
    }

    @Test func widenWithoutCapNetAdminNamesTheCapability() throws {
        let management = management()
        management.statuses[SetDefaultSystemConfiguration.opcode] = .permissionDenied
        #expect {
            try ConnectionParameterSetup.widenPeripheralInterval(controller: 0, using: management)
        } throws: { error in
            guard case .connectionParametersNeedCapability = error as? BluetoothError else { return false }
            return true
        }
    }
}
