import ArgumentParser
import BLELink
import Framing
import MsgPipeCLI
import Transport

/// `msgpipe-lab lab-probe coc-serve` / `coc-send`: Transport over an LE credit-based L2CAP channel
/// (``L2CAPChannel``, ``StreamLink``) between two controllers, for the lab to prove the channel and measure its
/// goodput beside l2test's raw baseline.
struct LabChannelServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "coc-serve")

    @Option(help: "The adapter: hciN.") var adapter: String = "hci0"
    @Option(help: "The PSM (0: a free dynamic one).") var psm: UInt16 = 0
    @Option(help: "Messages to receive before exiting.") var messages: Int = 1

    func run() async throws {
        let (adapter, psm) = (adapter, psm)
        let listener = try await BlockingCall.run { () throws(BluetoothError) in
            let management = try ManagementSocket()
            return try L2CAPChannel.SharedListener(L2CAPChannel.Listener(
                adapter: try BluetoothAdapter.resolve(try AdapterSelector(adapter), using: management), psm: psm))
        }
        BluetoothDiagnostics.emit("coc: listening on \(adapter) PSM 0x\(String(listener.psm, radix: 16))")
        let accepted = try await BlockingCall.run { () throws(BluetoothError) in try listener.accept() }
        guard let socket = accepted else { throw BluetoothError.invalidArgument("no channel") }
        let sendUnit = L2CAPChannel.sendUnit(socket.fileDescriptor) ?? 23
        BluetoothDiagnostics.emit("coc: channel from \(socket.peer), send MTU \(sendUnit)")
        let transport = Transport(link: try StreamLink(adopting: socket.fileDescriptor, sendUnit: sendUnit))
        var received = 0
        for await message in transport.messages {
            received += 1
            BluetoothDiagnostics.emit("coc: message \(received) of \(message.body.count) bytes, crc32 \(String(CRC32.checksum(message.body), radix: 16))")
            if received == messages { break }
        }
        try await Task.sleep(for: .seconds(1))  // the last acknowledgement goes out before the channel closes
        await transport.close()
    }
}

struct LabChannelSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "coc-send")

    @Option(help: "The adapter: hciN.") var adapter: String = "hci1"
    @Option(help: "The peer's public address.") var to: String
    @Option(help: "The peer's PSM.") var psm: UInt16
    @Option(help: "Bytes in the message.") var bytes: Int = 1 << 20

    func run() async throws {
        guard let address = BluetoothAddress(to) else { throw ValidationError("--to takes an address") }
        let (adapter, psm) = (adapter, psm)
        let socket = try await BlockingCall.run { () throws(BluetoothError) in
            let management = try ManagementSocket()
            let local = try BluetoothAdapter.resolve(try AdapterSelector(adapter), using: management)
            return try L2CAPChannel.connect(
                from: local.address, adapterName: local.name, to: BluetoothPeer(address: address), psm: psm,
                timeout: .seconds(20)).handOver()
        }
        let sendUnit = L2CAPChannel.sendUnit(socket.fileDescriptor) ?? 23
        BluetoothDiagnostics.emit("coc: connected to \(socket.peer) PSM 0x\(String(psm, radix: 16)), send MTU \(sendUnit)")
        let transport = Transport(link: try StreamLink(adopting: socket.fileDescriptor, sendUnit: sendUnit))
        let body = (0 ..< bytes).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        let started = ContinuousClock.now
        try await transport.send(body, timeout: .seconds(300))
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        BluetoothDiagnostics.emit("coc: \(bytes) bytes acknowledged in \(seconds) s, \(Int(Double(bytes) / seconds)) B/s, crc32 \(String(CRC32.checksum(body), radix: 16))")
        await transport.close()
    }
}
