import MsgPipeCore
import Testing

/// `PipeBackend` carries the kernel's options only where the kernel may run: bluez has none to hand over.
struct PipeBackendTests {
    static func kernel() throws -> KernelOptions {
        KernelOptions(
            connectionParameters: try ConnectionParameterRequest(interval: "7.5-15", latency: "0", supervisionTimeout: nil, phy: "2m"),
            bondDirectory: "/var/lib/msgpipe/bonds")
    }

    @Test("kernel options are reachable only through kernel and auto; bluez carries none")
    func kernelOptionsOnlyWhereTheKernelMayRun() throws {
        let kernel = try Self.kernel()
        #expect(PipeBackend.kernel(kernel).kernelOptions == kernel)
        #expect(PipeBackend.auto(kernel: kernel).kernelOptions == kernel)
        #expect(PipeBackend.auto(kernel: kernel).name == .auto)
        #expect(PipeBackend.bluez.kernelOptions == nil)
        #expect(PipeBackend.auto.kernelOptions == KernelOptions() && PipeBackend.kernel.kernelOptions == KernelOptions())
        #expect(PipeBackend.kernel(kernel) != .kernel && PipeBackend.auto(kernel: kernel) != .auto)
    }

    @Test("a named backend takes the kernel's options where the kernel may run; bluez refuses parameters, not bonds")
    func namedBackend() throws {
        let kernel = try Self.kernel()
        #expect(try PipeBackend(.auto, kernel: kernel) == .auto(kernel: kernel))
        #expect(try PipeBackend(.kernel, kernel: kernel) == .kernel(kernel))
        #expect(try PipeBackend(.bluez, kernel: KernelOptions(bondDirectory: "/var/lib/msgpipe/bonds")) == .bluez)
        #expect(try PipeBackend(.bluez, kernel: KernelOptions(connectionParameters: ConnectionParameterRequest())) == .bluez)
        let parameters = try #require(kernel.connectionParameters)
        do throws(MessagePipeError) {
            _ = try PipeBackend(.bluez, kernel: kernel)
            Issue.record("bluez took connection parameters")
        } catch {
            #expect(error == .connectionParametersThroughBluetoothd(parameters))
        }
    }

    @Test("the names are the command line's, in its order")
    func namesAreTheCommandLines() throws {
        #expect(PipeBackend.Name.allCases.map(\.rawValue) == ["auto", "bluez", "kernel"])
        #expect([PipeBackend.auto, .bluez, .kernel(try Self.kernel())].map(\.description) == ["auto", "bluez", "kernel"])
    }

    @Test("an empty request asks for nothing, so it is no reason to refuse bluetoothd")
    func anEmptyRequestAsksForNothing() throws {
        let empty = try ConnectionParameterRequest(interval: nil, latency: nil, supervisionTimeout: nil, phy: nil)
        #expect(KernelOptions(connectionParameters: empty).requestedConnectionParameters == nil)
        #expect(try Self.kernel().requestedConnectionParameters == Self.kernel().connectionParameters)
    }
}
