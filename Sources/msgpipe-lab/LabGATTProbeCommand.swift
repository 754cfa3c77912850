import GATT
import ArgumentParser
import BLELink
import Glibc
import MsgPipeCLI
import Transport

/// `msgpipe-lab lab-probe gatt-serve` (hidden): the msgpipe GATT service (GATTLink over ATTBearer) on the kernel's
/// ATT channel; counts the packets centrals write to RX. Lets the lab run gatttool and a goodput measurement
/// against the real GATT stack before `listen --adapter` exists.
struct LabGATTServe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gatt-serve")

    @OptionGroup var options: AdapterOptions
    @Option(help: "Centrals to serve before exiting (0: no limit).") var connections: Int = 1

    func run() async throws {
        let profile = GATTServiceProfile.msgpipe
        let service = AdvertisedServiceUUID(profile.service.description)
        do {
            try await options.acceptConnections(
                service: service, connections: connections == 0 ? nil : connections, onAdvertising: {
                BluetoothDiagnostics.emit("gatt: advertising '\($0.advertisement.localName)' on \($0.adapter)")
            }) { socket in
                BluetoothDiagnostics.emit("gatt: connection from \(socket.peer)")
                let bearer = try ATTBearer(adopting: socket.fileDescriptor)
                let link = GATTLink(profile: profile)
                // The link reports .disconnected only after a central subscribed; serve() returning is what
                // ends a connection, then close() finishes the event stream.
                let counting = Task { () -> (bytes: Int, packets: Int, first: ContinuousClock.Instant?, last: ContinuousClock.Instant) in
                    var bytes = 0, packets = 0
                    var first: ContinuousClock.Instant?, last = ContinuousClock.now
                    for await event in link.events {
                        switch event {
                        case let .connected(size): BluetoothDiagnostics.emit("gatt: subscribed, packets up to \(size) bytes")
                        case let .packet(packet):
                            if first == nil { first = .now }
                            last = .now
                            bytes += packet.count
                            packets += 1
                            if packets <= 3 { BluetoothDiagnostics.emit("gatt: RX packet \(ATTProbe.hex(Array(packet.prefix(16))))") }
                        case .maximumPacketSizeChanged, .disconnected: continue
                        }
                    }
                    return (bytes, packets, first, last)
                }
                let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: UInt16(ATTOpcode.maximumMTU))
                await link.serve(bearer, info: info)
                BluetoothDiagnostics.emit("gatt: disconnected")
                await link.close()
                let (bytes, packets, first, last) = await counting.value
                let seconds = first.map { Self.seconds($0.duration(to: last)) } ?? 0
                BluetoothDiagnostics.emit("gatt: received \(bytes) bytes in \(packets) packets over \(seconds) s")
            }
        } catch let error as BluetoothError {
            BluetoothDiagnostics.print("msgpipe lab-probe: \(error)")
            throw ExitCode(2)
        }
        BluetoothDiagnostics.emit("gatt: done")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// `msgpipe-lab lab-probe gatt-send` (hidden): a GATT client on the kernel's ATT channel that finds the msgpipe
/// service and writes `--bytes` to RX with Write Commands, then reads the info characteristic (its response
/// proves every write arrived) and prints the goodput.
struct LabGATTSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gatt-send")

    @OptionGroup var options: AdapterOptions
    @Option(help: "Bytes to write.") var bytes: Int = 131_072
    @Option(help: "ATT_MTU to ask for.") var mtu: Int = 247

    func run() async throws {
        let profile = GATTServiceProfile.msgpipe
        do {
            let options = options
            let socket = try await BlockingCall.run { () throws(BluetoothError) in
                try options.connectAsCentral(service: nil) { error, delay in
                    BluetoothDiagnostics.print("gatt: \(error); retrying in \(delay)")
                }.handOver()
            }
            BluetoothDiagnostics.emit("gatt: connected to \(socket.peer)")
            let client = GATTClient(bearer: try ATTBearer(adopting: socket.fileDescriptor))
            defer { client.close() }
            let agreed = try await client.exchangeMTU(mtu)
            let service = try await client.discoverPrimaryService(profile.service)
            let rx = try await client.characteristic(profile.rx, of: service)
            let info = try await client.characteristic(profile.info ?? profile.rx, of: service)
            let chunk = [UInt8](repeating: 0x6D, count: ATTOpcode.maximumValueLength(mtu: agreed))
            let start = ContinuousClock.now
            var sent = 0
            while sent < bytes {
                let count = min(chunk.count, bytes - sent)
                try await client.writeWithoutResponse(chunk[..<count], to: rx.valueHandle)
                sent += count
            }
            let infoValue = try await client.read(info.valueHandle)
            let seconds = LabGATTServe.seconds(start.duration(to: .now))
            BluetoothDiagnostics.emit("gatt: MTU \(agreed), info \(ATTProbe.hex(infoValue))")
            BluetoothDiagnostics.emit(
                "gatt: sent \(sent) bytes in \(seconds) s: goodput \(Int(Double(sent) / max(seconds, 1e-9))) bytes/s")
        } catch let error as BluetoothError {
            BluetoothDiagnostics.print("msgpipe lab-probe: \(error)")
            throw ExitCode(2)
        } catch {
            BluetoothDiagnostics.print("msgpipe lab-probe: \(error)")
            throw ExitCode(1)
        }
    }
}
