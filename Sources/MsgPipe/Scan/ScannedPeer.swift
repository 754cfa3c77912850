public import BLELink

/// What a scan asks for: which peers it keeps (an advertised service, an exact local name) and how it estimates
/// a peer's distance from its RSSI (d = 10^((|RSSI| - A) / (10 n)) metres, rough at best).
///
/// ```swift
/// let criteria = try ScanCriteria(service: "180D", attenuation: 3)
/// ```
public struct ScanCriteria: Sendable, Equatable {
    /// Why a criterion cannot be used.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The service is not a 16-, 32- or 128-bit UUID.
        case notAServiceUUID(String)
        /// The attenuation factor n is not positive.
        case attenuationNotPositive

        public var description: String {
            switch self {
            case let .notAServiceUUID(text):
                "'\(text)' is not a UUID (e.g. 180D or 12345678-1234-5678-1234-56789abcdef0)"
            case .attenuationNotPositive: "the attenuation factor must be positive"
            }
        }
    }

    /// Only peers advertising this service (nil: any).
    public let service: String?
    /// Only peers advertising exactly this local name (nil: any).
    public let name: String?
    /// A: the RSSI magnitude in dBm at 1 m from the transmitter.
    public let referencePower: Double
    /// n: the environment's attenuation factor (2 in free space, 2.5-4 indoors).
    public let attenuation: Double

    /// `service`: "180D", "0000180D" or a 128-bit UUID (dashes optional). Throws ``Failure`` for a service that
    /// is not a UUID or an attenuation that is not positive.
    public init(service: String? = nil, name: String? = nil, referencePower: Double = 59, attenuation: Double = 2.0)
        throws(Failure)
    {
        if let service, AdvertisedServiceUUID(service) == nil { throw .notAServiceUUID(service) }
        guard attenuation > 0 else { throw .attenuationNotPositive }
        (self.service, self.name, self.referencePower, self.attenuation) = (service, name, referencePower, attenuation)
    }

    /// The backend's filter for these criteria.
    var filter: ScanFilter { ScanFilter(service: service.flatMap { AdvertisedServiceUUID($0) }, name: name) }

    /// The estimate's model.
    var estimate: DistanceEstimate { DistanceEstimate(referencePower: referencePower, attenuation: attenuation) }
}

/// One advertising peer a scan found: its address, name, signal and the services it advertises.
public struct ScannedPeer: Sendable, Equatable {
    /// The peer's address and address type.
    public let peer: BluetoothPeer
    /// Its advertised local name (nil: it advertises none).
    public let name: String?
    /// The signal strength in dBm (127: the controller had none).
    public let rssi: Int8
    /// The estimated distance in metres under the scan's ``ScanCriteria`` (nil: no RSSI).
    public let distanceMetres: Double?
    /// The service UUIDs it advertises, as text ("180D", or 128-bit with dashes), in advertised order.
    public let services: [String]

    init(_ discovered: DiscoveredPeer, estimate: DistanceEstimate) {
        peer = discovered.peer
        name = discovered.name
        rssi = discovered.rssi
        distanceMetres = estimate.metres(rssi: discovered.rssi)
        services = discovered.services.map(\.description)
    }
}

extension MessagePipe {
    /// Lists advertising LE peers that `criteria` keeps for `duration`, on `adapter` (nil: the first powered LE
    /// adapter) through `backend` (bluetoothd's discovery for bluez, the mgmt socket for kernel). `onFound`
    /// hears each kept peer the first time it is seen; the result is every such peer, strongest first. Throws
    /// `BluetoothError` or `BlueZError` (no adapter, powered off, bluetoothd missing for bluez,
    /// no permission), the remedy in the error's description. `busAddress`: where bluetoothd runs (nil: the system bus).
    ///
    /// ```swift
    /// let tills = try await MessagePipe.scan(for: .seconds(5), matching: ScanCriteria(name: "till-7"))
    /// for till in tills { print(till.peer.address, till.rssi, till.distanceMetres ?? .nan) }
    /// ```
    public static func scan(
        adapter: String? = nil, backend: PipeBackend.Name = .auto, for duration: Duration, matching criteria: ScanCriteria,
        busAddress: String? = nil, onStart: @escaping @Sendable (ScanStart) -> Void = { _ in },
        onFound: @escaping @Sendable (ScannedPeer) -> Void = { _ in }
    ) async throws -> [ScannedPeer] {
        let estimate = criteria.estimate
        return try await scan(
            adapter: adapter, backend: backend, for: duration, filter: criteria.filter, busAddress: busAddress,
            onStart: onStart, onMatch: { onFound(ScannedPeer($0, estimate: estimate)) }
        ).map { ScannedPeer($0, estimate: estimate) }
    }
}
