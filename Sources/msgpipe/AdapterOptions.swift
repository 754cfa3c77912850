import ArgumentParser
import BLELink
import Glibc

/// The Bluetooth options of every command that uses a local controller (`scan`, and `listen`/`send` over BLE).
struct AdapterOptions: ParsableArguments {
    @Option(help: "The Bluetooth adapter: hciN or its address (default: the first powered LE adapter).")
    var adapter: String?

    @Option(help: "Be the peripheral and advertise this local name (default for a peripheral: msgpipe).")
    var name: String?

    @Option(help: "Be the central and connect to this peer: ADDRESS, ADDRESS/random, or an advertised NAME.")
    var to: String?

    /// The local name a peripheral advertises.
    var localName: String { name ?? "msgpipe" }

    @Option(help: """
        Link security. low: nothing on the link (anyone in range can listen; Transport still checks every \
        message's integrity). medium: encrypted (Just Works pairing) against passive eavesdroppers, not \
        against an active man in the middle during pairing. high: authenticated pairing (passkey or numeric \
        comparison): through bluetoothd it needs an agent with input or a display (e.g. bluetoothctl's); \
        msgpipe registers its own NoInputNoOutput agent for medium only, which cannot meet high.
        """)
    var security: String = "low"

    @Option(help: "Seconds a connect attempt (and a scan for --to NAME) may take.")
    var connectTimeout: Double = 20

    @Option(help: """
        The Bluetooth stack: bluez (beside bluetoothd, through D-Bus: the stock box), kernel (the L2CAP ATT \
        channel directly; bluetoothd must not run), or auto (bluez when bluetoothd is on the system bus).
        """)
    var backend: BackendChoice = .auto

    /// True when the user asked for Bluetooth (an adapter or a peer), not another link.
    var usesBluetooth: Bool { adapter != nil || to != nil || backend != .auto }

    func validate() throws {
        _ = try selector()
        _ = try securityLevel()
        guard connectTimeout > 0 else { throw ValidationError("--connect-timeout must be positive") }
    }

    func selector() throws(BluetoothError) -> AdapterSelector { try AdapterSelector(adapter) }

    /// The backend `--backend` chooses (with `auto`, bluez when bluetoothd runs); `verbose` says which.
    func resolveBackend(verbose: Bool) async throws(BlueZError) -> BluetoothBackend {
        let resolved = try await BluetoothBackend.resolve(backend)
        if verbose { BluetoothDiagnostics.print(resolved.summary) }
        return resolved
    }

    func securityLevel() throws(BluetoothError) -> L2CAPSecurityLevel {
        guard let level = L2CAPSecurityLevel(rawValue: security) else {
            throw .invalidArgument("--security must be low, medium or high, not '\(security)'")
        }
        return level
    }

    /// The peripheral role: binds the adapter's ATT channel and advertises `name` with `service`; call
    /// `nextConnection()` on the result for each central (advertising restarts after every disconnect).
    func makePeripheral(service: AdvertisedServiceUUID?) throws(BluetoothError) -> BLEPeripheral {
        try BLEPeripheral(
            adapter: try selector(), advertisement: Advertisement(localName: localName, service: service),
            security: try securityLevel())
    }

    /// The central role: resolves `--to` (scanning when it is a name), connects with the timeout, and retries
    /// transient failures with backoff; returns the connected ATT socket and the peer.
    func connectAsCentral(
        service: AdvertisedServiceUUID?, onRetry: (BluetoothError, Double) -> Void = { _, _ in }
    ) throws(BluetoothError) -> L2CAPConnection {
        guard let to else { throw .invalidArgument("a central needs --to ADDRESS or --to NAME") }
        let timeout = Duration.milliseconds(Int64(connectTimeout * 1000))
        let central = try BLECentral(
            adapter: try selector(), security: try securityLevel(), connectTimeout: timeout, scanTimeout: timeout)
        return try central.connect(
            to: CentralTarget(to), service: service, onRetry: { error, delay in onRetry(error, delay / .seconds(1)) })
    }
}

extension AdapterOptions {
    /// Peripheral accept loop for async commands (`listen --adapter`), one central at a time: advertises `name`
    /// with `service`, and for each central calls `serve` with the connected ATT socket (which `serve` owns
    /// and must close, e.g. through `ATTBearer(adopting:)`); no other central can connect meanwhile (advertising
    /// is off); when `serve` returns, advertising restarts and the next central is accepted. Returns after
    /// `connections` centrals (nil: never); blocking calls run on their own thread. Several at once:
    /// ``acceptConcurrentConnections(service:maximumConcurrent:connections:onAdvertising:serve:)``.
    func acceptConnections(
        service: AdvertisedServiceUUID?, connections: Int? = nil, onAdvertising: (BLEPeripheral) -> Void = { _ in },
        serve: (ConnectedATTSocket) async throws -> Void
    ) async throws {
        let peripheral = try await BlockingCall.run { () throws(BluetoothError) in
            try makePeripheral(service: service)
        }
        onAdvertising(peripheral)
        defer { peripheral.stop() }
        var served = 0
        while connections.map({ served < $0 }) ?? true {
            let next = try await BlockingCall.run { () throws(BluetoothError) in
                try peripheral.nextConnection()?.handOver()
            }
            guard let next else { return }
            served += 1
            try await serve(next)
        }
    }

    /// Peripheral accept loop serving several centrals at once (`listen`/`serve` with `--max-centrals`):
    /// advertises `name` with `service` while fewer than `maximumConcurrent` centrals are linked (stops at
    /// the maximum, resumes when one leaves) and runs `serve` for each central in a child task of its own,
    /// with the connected ATT socket (which `serve` owns and must close). A central's failure is `serve`'s to
    /// handle. Returns once `connections` centrals (nil: never) were accepted and all of them were served;
    /// throws when accepting fails (the centrals being served are cancelled).
    func acceptConcurrentConnections(
        service: AdvertisedServiceUUID?, maximumConcurrent: Int, connections: Int? = nil,
        onAdvertising: (BLEPeripheral) -> Void = { _ in },
        serve: @escaping @Sendable (ConnectedATTSocket) async -> Void
    ) async throws {
        let peripheral = try await BlockingCall.run { () throws(BluetoothError) in
            try makePeripheral(service: service)
        }
        onAdvertising(peripheral)
        defer { peripheral.stop() }
        try await withThrowingDiscardingTaskGroup { group in
            var accepted = 0
            // Never more linked at once than there are connections left to accept: at the maximum the
            // advertising instance is removed, so no central can land where nobody will accept it.
            let maximum = min(maximumConcurrent, connections ?? .max)
            for try await socket in peripheral.connections(maximumConcurrent: maximum) {
                accepted += 1
                group.addTask { await serve(socket) }
                if let connections, accepted >= connections {
                    peripheral.stop()  // the last one: no advertising while they are served
                    break
                }
            }
        }
    }

    /// Central connect for async commands (`send --to`): the connected ATT socket, owned by the caller.
    func connectedSocket(
        service: AdvertisedServiceUUID?, onRetry: @escaping @Sendable (BluetoothError, Double) -> Void = { _, _ in }
    ) async throws(BluetoothError) -> ConnectedATTSocket {
        try await BlockingCall.run { () throws(BluetoothError) in
            try connectAsCentral(service: service, onRetry: onRetry).handOver()
        }
    }
}

/// Unbuffered line output of the Bluetooth commands (a line shows up at once, even when piped).
enum BluetoothDiagnostics {
    /// One diagnostic line on stderr.
    static func print(_ message: String) { write(message, to: 2) }

    /// One data line on stdout.
    static func emit(_ message: String) { write(message, to: 1) }

    private static func write(_ message: String, to descriptor: Int32) {
        var line = message + "\n"
        line.withUTF8 { _ = Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}
