import GATT
import ArgumentParser
import BLELink
import Glibc
import MsgPipeCLI

/// `msgpipe-lab lab-probe`: raw ATT exchanges over the kernel's L2CAP sockets, for the VM lab
/// (Scripts/lab-test.sh) to prove the kernel binding in both roles before GATT sits on top.
struct LabProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab-probe",
        abstract: "Lab only: a minimal ATT peer on the kernel's L2CAP ATT channel.",
        subcommands: [Serve.self, Connect.self, LabGATTServe.self, LabGATTSend.self, LabChannelServe.self, LabChannelSend.self])

    /// Peripheral: advertise, accept `connections` centrals, answer Exchange MTU and Read of handle 3.
    struct Serve: ParsableCommand {
        @OptionGroup var options: AdapterOptions
        @Option(help: "Service UUID to advertise.") var service: String = "12345678-1234-5678-1234-56789abcdef0"
        @Option(help: "Centrals to serve before exiting (0: no limit).") var connections: Int = 1

        func run() throws {
            do {
                let peripheral = try options.makePeripheral(service: AdvertisedServiceUUID(service))
                BluetoothDiagnostics.emit("probe: advertising '\(options.localName)' on \(peripheral.adapter)")
                var served = 0
                while connections == 0 || served < connections {
                    served += 1
                    guard let connection = try peripheral.nextConnection() else { break }
                    BluetoothDiagnostics.emit("probe: connection from \(connection.peer)")
                    let pdus = ATTProbe.serve(connection.socket.rawValue)
                    BluetoothDiagnostics.emit("probe: peer gone after \(pdus) PDUs")
                }
                peripheral.stop()
            } catch {
                BluetoothDiagnostics.print("msgpipe lab-probe: \(error)")
                throw ExitCode(2)
            }
        }
    }

    /// Central: connect (by address or advertised name), Exchange MTU, Read handle 3, print the results.
    struct Connect: ParsableCommand {
        @OptionGroup var options: AdapterOptions
        @Option(help: "ATT_MTU to offer.") var mtu: UInt16 = 247

        func run() throws {
            do {
                let connection = try options.connectAsCentral(service: nil) { error, delay in
                    BluetoothDiagnostics.print("probe: \(error); retrying in \(delay)")
                }
                BluetoothDiagnostics.emit("probe: connected to \(connection.peer)")
                let fd = connection.socket.rawValue
                let mtuResponse = try ATTProbe.exchange(fd, [0x02, UInt8(mtu & 0xFF), UInt8(mtu >> 8)])
                guard mtuResponse.count == 3, mtuResponse[0] == 0x03 else {
                    BluetoothDiagnostics.emit("probe: unexpected MTU response \(ATTProbe.hex(mtuResponse))")
                    throw ExitCode(1)
                }
                BluetoothDiagnostics.emit("probe: server MTU \(UInt16(mtuResponse[1]) | UInt16(mtuResponse[2]) << 8)")
                let read = try ATTProbe.exchange(fd, [0x0A, 0x03, 0x00])
                BluetoothDiagnostics.emit("probe: read 0x0003 -> \(ATTProbe.hex(read)) \"\(String(decoding: read.dropFirst(), as: UTF8.self))\"")
            } catch let error as BluetoothError {
                BluetoothDiagnostics.print("msgpipe lab-probe: \(error)")
                throw ExitCode(2)
            }
        }
    }
}

/// The probe's byte exchanges: raw ATT PDUs, one per send/recv on a SEQPACKET socket.
enum ATTProbe {
    static let value = Array("msgpipe-lab-probe".utf8)

    /// Answers PDUs until the peer disconnects; returns how many arrived.
    static func serve(_ fd: Int32) -> Int {
        var count = 0
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return count }
            count += 1
            let pdu = Array(buffer[0..<n])
            BluetoothDiagnostics.emit("probe: RX \(hex(pdu))")
            let response: [UInt8]? = switch pdu[0] {
            case 0x02: [0x03, 185, 0]
            case 0x0A where pdu.count == 3 && pdu[1] == 3 && pdu[2] == 0: [0x0B] + value
            case let opcode where opcode & 0x40 != 0 || opcode == 0x1E: nil
            case let opcode: [0x01, opcode, pdu.count >= 3 ? pdu[1] : 0, pdu.count >= 3 ? pdu[2] : 0, 0x06]
            }
            if let response {
                _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            }
        }
    }

    /// Sends `request` and returns the next PDU (5 s limit).
    static func exchange(_ fd: Int32, _ request: [UInt8]) throws(BluetoothError) -> [UInt8] {
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw .system(call: "send", errno: errno, message: String(cString: strerror(errno)))
        }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 5000) == 1 else { throw .system(call: "poll", errno: ETIMEDOUT, message: "no response in 5 s") }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw .system(call: "recv", errno: errno, message: String(cString: strerror(errno))) }
        return Array(buffer[0..<n])
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}
