/// The central role end to end: finds the peer (by scanning when given a name), connects the ATT channel
/// with a timeout, and retries transient failures with backoff. Blocking; use from one thread.
public final class BLECentral {
    public let adapter: BluetoothAdapter
    private let management: ManagementSocket
    public var security: L2CAPSecurityLevel
    /// How long one connect attempt may take.
    public var connectTimeout: Duration
    /// How long a scan for a name may take.
    public var scanTimeout: Duration
    public var backoff: ReconnectBackoff

    /// Resolves the adapter and checks it is powered with LE.
    public init(
        adapter selector: AdapterSelector, security: L2CAPSecurityLevel = .low, connectTimeout: Duration = .seconds(20),
        scanTimeout: Duration = .seconds(20), backoff: ReconnectBackoff = ReconnectBackoff()
    ) throws(BluetoothError) {
        let management = try ManagementSocket()
        let adapter = try BluetoothAdapter.resolve(selector, using: management)
        try adapter.requireReadyForLowEnergy()
        self.management = management
        self.adapter = adapter
        self.security = security
        self.connectTimeout = connectTimeout
        self.scanTimeout = scanTimeout
        self.backoff = backoff
    }

    /// The peer `target` names: itself, or the first peer advertising that name (optionally also `service`).
    public func resolve(_ target: CentralTarget, service: AdvertisedServiceUUID? = nil) throws(BluetoothError) -> BluetoothPeer {
        switch target {
        case let .peer(peer):
            return peer
        case let .name(name):
            let found = try Scanner.scan(
                adapter: adapter, using: management, duration: scanTimeout,
                filter: ScanFilter(service: service, name: name), stopAtFirstMatch: true)
            guard let first = found.first else { throw .peerNotFound(query: "name '\(name)'", timeout: scanTimeout) }
            return first.peer
        }
    }

    /// Resolves and connects, retrying transient failures (timeouts, peer not found) per ``backoff``;
    /// configuration errors (permissions, adapter down, no Bluetooth) are thrown at once. `onRetry` gets each
    /// retried failure and the wait before the next attempt.
    public func connect(
        to target: CentralTarget, service: AdvertisedServiceUUID? = nil,
        onRetry: (BluetoothError, Duration) -> Void = { _, _ in }
    ) throws(BluetoothError) -> L2CAPConnection {
        var failures = 0
        while true {
            do throws(BluetoothError) {
                let peer = try resolve(target, service: service)
                return try ATTConnector.connect(
                    from: adapter.address, adapterName: adapter.name, to: peer, timeout: connectTimeout,
                    security: security)
            } catch {
                failures += 1
                guard error.isTransient, failures < backoff.attempts else { throw error }
                let delay = backoff.delay(afterFailures: failures)
                onRetry(error, delay)
                pause(for: delay)
            }
        }
    }
}
