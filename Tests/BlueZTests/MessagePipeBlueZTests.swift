import BLELink
import BlueZLink
import SDBus
import MsgPipe
import GATT
import Synchronization
import Testing
import Transport

/// The library's peripheral through bluetoothd: `MessagePipe.advertise` against the fake org.bluez on a private
/// bus, a central that bluetoothd hands the descriptors of, messages both ways.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .serialized,
       .timeLimit(.minutes(2)))
struct MessagePipeBlueZTests {
    @Test func advertiseThroughBluetoothdServesACentralBothWays() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let notes = Mutex<[PipeNote]>([])
        var options = MessagePipe.Options()
        options.backend = .bluez
        options.adapter = "hci0"
        options.bluetoothdBus = bus.address
        options.onNote = { note in notes.withLock { $0.append(note) } }
        let server = try await MessagePipe.advertise(name: "msgpipe-lib", options: options)
        #expect(server.description.hasPrefix("advertising 'msgpipe-lib' on hci0 (through bluetoothd)"), "\(server.description)")
        #expect(fake.record.advertisement.withLock { $0?["LocalName"] } == .string("msgpipe-lib"))
        #expect(notes.withLock { $0 }.contains { $0.kind == .detail && $0.description.hasPrefix("backend: bluez") })
        // bluetoothd's adapter keeps its default interval range: said once, as advice.
        #expect(notes.withLock { $0 }.filter { $0.kind == .advice && $0.description.contains("connection interval") }.count == 1)

        let ends = try await fake.acquire(device: BlueZPeripheralTests.device, mtu: 185)
        let central = try AcquiredLink(sending: ends.write, receiving: ends.notify,
                                       maximumPacketSize: AcquiredLink.maximumPacketSize(mtu: 185))
        let transport = Transport(link: central)
        let body = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        try await transport.send(body, timeout: .seconds(20))
        var centrals = server.centrals.makeAsyncIterator()
        let pipe = try #require(await centrals.next())
        var messages = pipe.messages.makeAsyncIterator()
        #expect(await messages.next()?.bytes == body)
        try await pipe.send(Array("receipt".utf8), timeout: .seconds(20))
        var replies = transport.messages.makeAsyncIterator()
        #expect(await replies.next()?.body == Array("receipt".utf8))
        await transport.close()
        await server.close()
    }

    @Test func bluezRefusesAtOnceWhereNoBluetoothdRuns() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        var options = MessagePipe.Options()
        options.backend = .bluez
        options.bluetoothdBus = bus.address
        await #expect(throws: BlueZError.self) {
            _ = try await MessagePipe.advertise(name: "nobody", options: options)
        }
    }
}

/// Kernel options when auto picks bluetoothd: its D-Bus API sets no connection parameters, so both roles refuse
/// with the main.conf remedy before bluetoothd is asked anything (``PipeStacks`` decides it once); a bond directory
/// alone does not apply there and the pipe is made.
@Suite(.enabled(if: PrivateBus.isAvailable, "dbus-daemon is not installed (apt install dbus-daemon)"), .serialized,
       .timeLimit(.minutes(2)))
struct MessagePipeBlueZConnectionParameterTests {
    static func options(bus: PrivateBus, kernel: KernelOptions) -> MessagePipe.Options {
        var options = MessagePipe.Options()
        options.backend = .auto(kernel: kernel)
        options.adapter = "hci0"
        options.bluetoothdBus = bus.address
        return options
    }

    static func parameters() throws -> ConnectionParameterRequest {
        try ConnectionParameterRequest(interval: "15-30", latency: nil, supervisionTimeout: nil, phy: nil)
    }

    @Test func aPeripheralRefusesBeforeRegistering() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let parameters = try Self.parameters()
        let options = Self.options(bus: bus, kernel: KernelOptions(connectionParameters: parameters))
        await #expect(throws: MessagePipeError.connectionParametersThroughBluetoothd(parameters)) {
            _ = try await MessagePipe.advertise(name: "msgpipe-params", options: options)
        }
        #expect(fake.record.application.withLock { $0 } == nil)
        #expect(fake.record.advertisement.withLock { $0 } == nil)
    }

    @Test func aCentralRefusesBeforeDiscoveringOrConnecting() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZRemote(address: bus.address)
        defer { fake.stop() }
        fake.announceWhenDiscovering(BlueZCentralTests.peripheral)
        let parameters = try Self.parameters()
        let options = Self.options(bus: bus, kernel: KernelOptions(connectionParameters: parameters))
        await #expect {
            _ = try await MessagePipe.connect(to: "msgpipe-peer", options: options)
        } throws: { error in
            error as? MessagePipeError == .connectionParametersThroughBluetoothd(parameters)
                && "\(error)".contains("MinConnectionInterval=12 MaxConnectionInterval=24")
        }
        #expect(fake.record.starts.withLock { $0 } == 0 && fake.record.connectAttempts.withLock { $0 } == 0)
    }

    @Test func aBondDirectoryAloneIsBluetoothdsBusinessThere() async throws {
        let bus = try await PrivateBus.started()
        defer { bus.stop() }
        let fake = try await FakeBlueZ(address: bus.address)
        defer { fake.stop() }
        let options = Self.options(bus: bus, kernel: KernelOptions(bondDirectory: "/nonexistent/msgpipe-bonds"))
        let server = try await MessagePipe.advertise(name: "msgpipe-bonds", options: options)
        #expect(server.description.hasPrefix("advertising 'msgpipe-bonds' on hci0 (through bluetoothd)"), "\(server.description)")
        await server.close()
    }
}
