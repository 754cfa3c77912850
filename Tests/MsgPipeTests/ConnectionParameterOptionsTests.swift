import BLELink
import GATT
import MsgPipe
import TestSupport
import Testing

/// What the library says when connection parameters cannot be applied where they were asked for.
struct ConnectionParameterOptionsTests {
    @Test func throughBluetoothdTheErrorGivesMainConfLinesInItsUnits() throws {
        let request = try ConnectionParameterRequest(interval: "7.5-15", latency: "2", supervisionTimeout: "2000", phy: nil)
        let text = MessagePipeError.connectionParametersThroughBluetoothd(request).description
        #expect(text.contains("/etc/bluetooth/main.conf's [LE] section"))
        #expect(text.contains("MinConnectionInterval=6 MaxConnectionInterval=12 ConnectionLatency=2 ConnectionSupervisionTimeout=200"))
        #expect(text.contains("1.25 ms units") && text.contains("10 ms units"))
        #expect(text.contains("or use the kernel backend (with bluetoothd stopped)") && !text.contains("--"))
        #expect(!text.contains("PHY preference needs"))
    }

    @Test func aPHYPreferenceThroughBluetoothdNamesTheKernelBackendOnly() throws {
        let request = try ConnectionParameterRequest(interval: nil, latency: nil, supervisionTimeout: nil, phy: "2m")
        let text = MessagePipeError.connectionParametersThroughBluetoothd(request).description
        #expect(text.contains("a PHY preference needs the kernel backend"))
        #expect(!text.contains("MinConnectionInterval"))
    }

    @Test func overAUnixSocketThereIsNoLEConnectionToApplyThemTo() async throws {
        // Over a UNIX socket there is no LE link: the options do not apply and the pipe is made as usual.
        let path = "/tmp/msgpipe-test-params-\(UInt32.random(in: 0 ... .max)).sock"
        var options = MessagePipe.Options.patientForTests
        options.backend = .kernel(KernelOptions(
            connectionParameters: try ConnectionParameterRequest(interval: "7.5", latency: nil, supervisionTimeout: nil, phy: nil)))
        let server = try await MessagePipe.listen(path: path, options: options)
        let pipe = try await MessagePipe.connect(to: "unix:\(path)", options: options)
        try await pipe.send([1, 2, 3])
        await pipe.close()
        await server.close()
    }
}
