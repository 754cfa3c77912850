import ArgumentParser
import MsgPipe

/// `msgpipe scan`: lists advertising LE peers with name, address, RSSI, services and estimated distance.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List nearby BLE peripherals (name, address, RSSI, services, estimated distance).",
        discussion: """
            Distance is the estimate d = 10^((|RSSI| - A) / (10 n)) metres, rough at best.
            Exit status: 0 when at least one peer matched, 1 when none did, 2 on a Bluetooth error.

            Reference: docs/CLI.md.
            """)

    @Option(help: "The Bluetooth adapter: hciN or its address (default: the first powered LE adapter).")
    var adapter: String?

    @Option(help: "Only peers advertising this service UUID (16-bit like 180D, or 128-bit).")
    var service: String?

    @Option(help: "Only peers advertising exactly this local name.")
    var name: String?

    @Option(help: "Seconds to scan.")
    var timeout: Double = 10

    @Option(name: .customLong("reference-power"), help: "A: |RSSI| in dBm at 1 m, for the distance estimate.")
    var referencePower: Double = 59

    @Option(help: "n: the environment's attenuation factor, for the distance estimate.")
    var attenuation: Double = 2.0

    @Flag(help: "Print one JSON array of peers on stdout at the end instead of a line per peer.")
    var json = false

    @Option(help: """
        The Bluetooth stack: bluez (bluetoothd's discovery, shared with its other clients), kernel (the mgmt \
        socket; bluetoothd must not run), or auto (bluez when bluetoothd is on the system bus).
        """)
    var backend: PipeBackend.Name = .auto

    @Flag(help: "Say which backend scans.")
    var verbose = false

    func validate() throws {
        do throws(ScanCriteria.Failure) {
            _ = try criteria()
        } catch .notAServiceUUID {
            throw ValidationError("--service \(ScanCriteria.Failure.notAServiceUUID(service ?? ""))")
        } catch {}
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard attenuation > 0 else { throw ValidationError("--attenuation must be positive") }
    }

    /// The library's criteria for `--service`, `--name`, `--reference-power` and `--attenuation`.
    func criteria() throws(ScanCriteria.Failure) -> ScanCriteria {
        try ScanCriteria(service: service, name: name, referencePower: referencePower, attenuation: attenuation)
    }

    func run() async throws {
        let (json, timeout, verbose) = (json, timeout, verbose)
        let peers: [ScannedPeer]
        do {
            peers = try await MessagePipe.scan(
                adapter: adapter, backend: backend, for: .milliseconds(Int64(timeout * 1000)), matching: try criteria(),
                onStart: { start in
                    if verbose { BluetoothDiagnostics.print(start.backend) }
                    BluetoothDiagnostics.print(
                        "scanning on \(start.adapter) for \(timeout) s\(start.throughBluetoothd ? " (through bluetoothd)" : "")")
                },
                onFound: { peer in if !json { BluetoothDiagnostics.emit(ScanLine.text(peer)) } })
        } catch {
            BluetoothDiagnostics.print("msgpipe scan: \(cli: error)")
            throw ExitCode(2)
        }
        if json { BluetoothDiagnostics.emit(ScanLine.json(peers)) }
        if peers.isEmpty { throw ExitCode(1) }
    }
}

/// Formats scan results for people (one line per peer) and machines (JSON).
enum ScanLine {
    static func text(_ peer: ScannedPeer) -> String {
        let distance = peer.distanceMetres.map { "~\(rounded($0)) m" } ?? "? m"
        let services = peer.services.joined(separator: ",")
        return "\(peer.peer.address) \(peer.peer.type) rssi \(peer.rssi) dBm \(distance) "
            + "name \(peer.name.map { "\"\($0)\"" } ?? "-") services \(services.isEmpty ? "-" : services)"
    }

    static func json(_ peers: [ScannedPeer]) -> String {
        JSONLine.text(peers.map(PeerLine.init))
    }

    /// One peer of `scan --json`; a missing name or distance is null.
    struct PeerLine: Encodable {
        let address: String
        let addressType: String
        let name: OrNull<String>
        let rssi: Int
        let distanceMetres: OrNull<Double>
        let services: [String]

        init(_ peer: ScannedPeer) {
            address = peer.peer.address.description
            addressType = peer.peer.type.description
            name = OrNull(peer.name)
            rssi = Int(peer.rssi)
            distanceMetres = OrNull(peer.distanceMetres.flatMap { JSONLine.rounded($0, decimals: 2) })
            services = peer.services
        }
    }

    /// Two decimals, without Foundation.
    static func rounded(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
