import BLELink
import MsgPipeCLI

/// The kernel-level peripheral and central the lab probes use directly (below GATT and MsgPipe).
extension AdapterOptions {
    /// `--adapter` as the kernel-level probes select it.
    private func selector() throws(BluetoothError) -> AdapterSelector { try AdapterSelector(adapter) }

    /// `--security`, already checked by `validate()`; typed as the probes' other errors.
    private func labSecurityLevel() throws(BluetoothError) -> L2CAPSecurityLevel {
        do { return try securityLevel() } catch { throw .invalidArgument(error.message) }
    }

    /// Binds the adapter's ATT channel and advertises the local name with `service`.
    func makePeripheral(service: AdvertisedServiceUUID?) throws(BluetoothError) -> BLEPeripheral {
        try BLEPeripheral(
            adapter: try selector(), advertisement: Advertisement(localName: localName, service: service),
            security: try labSecurityLevel())
    }

    /// Resolves `--to` (scanning for a name), connects with the timeout, retries transient failures.
    func connectAsCentral(
        service: AdvertisedServiceUUID?, onRetry: (BluetoothError, Duration) -> Void = { _, _ in }
    ) throws(BluetoothError) -> L2CAPConnection {
        guard let to else { throw .invalidArgument("a central needs --to ADDRESS or --to NAME") }
        let timeout = Duration.milliseconds(Int64(connectTimeout * 1000))
        let central = try BLECentral(
            adapter: try selector(), security: try labSecurityLevel(), connectTimeout: timeout, scanTimeout: timeout)
        return try central.connect(to: CentralTarget(to), service: service, onRetry: onRetry)
    }

    /// One central at a time: advertises, runs `serve` with each central's connected ATT socket (which `serve`
    /// owns), advertises again when it returns; after `connections` centrals (nil: never) it returns.
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
}
