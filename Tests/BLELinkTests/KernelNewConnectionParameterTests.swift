import GATT
import Testing
@testable import BLELink

/// New Connection Parameter (mgmt event 0x001C, BlueZ doc/mgmt-api.txt): the layout's byte vector decodes to
/// its fields and encodes back, every truncation and a trailing byte throw a typed error, and the watch's
/// capability test reads /proc's CapEff.
struct KernelNewConnectionParameterTests {
    /// C0:11:22:33:44:55 LE random, store hint 1, 100-150 ms (0x0050-0x0078), latency 0, 420 ms (0x002A).
    static let parameters: [UInt8] = [
        0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02, 0x01, 0x50, 0x00, 0x78, 0x00, 0x00, 0x00, 0x2A, 0x00,
    ]
    static let event = NewConnectionParameter(
        peer: BluetoothPeer(address: BluetoothAddress("C0:11:22:33:44:55")!, type: .leRandom), storeHint: 1,
        minimumInterval: 80, maximumInterval: 120, latency: 0, supervisionTimeout: 42)

    @Test func theSpecLayoutDecodesAndEncodesBack() throws {
        #expect(try NewConnectionParameter(decoding: Self.parameters[...]) == Self.event)
        var out: [UInt8] = []
        Self.event.encode(into: &out)
        #expect(out == Self.parameters)
        let parameters = try Self.event.connectionParameters()
        #expect(parameters.description == "interval 100-150 ms, latency 0, supervision timeout 420 ms")
    }

    @Test func theWholeEventPacketDecodesAsItsKind() throws {
        let packet = Self.event.encodedEvent(controllerIndex: 1)
        #expect(Array(packet.prefix(6)) == [0x1C, 0x00, 0x01, 0x00, 0x10, 0x00])
        let decoded = try ManagementEvent(decoding: packet[...])
        #expect(decoded == ManagementEvent(controllerIndex: 1, kind: .newConnectionParameter(Self.event)))
    }

    @Test func everyTruncationAndATrailingByteThrow() {
        for end in 0..<Self.parameters.count {
            #expect(throws: BluetoothError.self, "prefix of \(end) bytes") {
                try NewConnectionParameter(decoding: Self.parameters[..<end])
            }
            let packet = [UInt8].managementEvent(code: 0x001C, controllerIndex: 0, parameters: Array(Self.parameters[..<end]))
            #expect(throws: BluetoothError.self) { try ManagementEvent(decoding: packet[...]) }
        }
        #expect(throws: BluetoothError.self) { try NewConnectionParameter(decoding: (Self.parameters + [0])[...]) }
    }

    @Test func valuesThatBreakARuleDecodeButDoNotBecomeParameters() throws {
        var bytes = Self.parameters
        bytes[8] = 0x02  // minimum interval 2 units (2.5 ms): below 7.5 ms
        let event = try NewConnectionParameter(decoding: bytes[...])
        #expect(throws: ConnectionParametersError.self) { try event.connectionParameters() }
    }

    @Test func theCapabilityIsBit12OfCapEff() {
        #expect(ConnectionParameterWatch.hasNetworkAdministration(procStatus: "Name:\tx\nCapEff:\t000001ffffffffff\n"))
        #expect(ConnectionParameterWatch.hasNetworkAdministration(procStatus: "CapEff:\t0000000000001000\n"))
        #expect(!ConnectionParameterWatch.hasNetworkAdministration(procStatus: "CapEff:\t0000000000000fff\n"))
        #expect(!ConnectionParameterWatch.hasNetworkAdministration(procStatus: "CapEff:\tzz\n"))
        #expect(!ConnectionParameterWatch.hasNetworkAdministration(procStatus: ""))
    }
}
