/// A peer seen while scanning, with what its advertising data and scan response said.
public struct DiscoveredPeer: Sendable, Equatable {
    public var peer: BluetoothPeer
    public var name: String?
    /// The last RSSI reported, in dBm (127: unknown).
    public var rssi: Int8
    public var services: [AdvertisedServiceUUID]
    /// Manufacturer-specific data by company identifier (AD type 0xFF), the last seen per company.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID (AD types 0x16, 0x20, 0x21), the last seen per service.
    public var serviceData: [AdvertisedServiceUUID: [UInt8]] = [:]

    /// Most manufacturer (and service) data entries kept per peer, and bytes per entry (an extended
    /// advertisement's most).
    public static let manufacturerDataLimit = (entries: 16, bytes: 1650)

    public init(peer: BluetoothPeer, name: String? = nil, rssi: Int8, services: [AdvertisedServiceUUID] = [],
                manufacturerData: [UInt16: [UInt8]] = [:]) {
        self.peer = peer
        self.name = name
        self.rssi = rssi
        self.services = services
        self.manufacturerData = manufacturerData
    }

    /// Records one manufacturer data entry, within ``manufacturerDataLimit`` (an entry over it is ignored).
    public mutating func setManufacturerData(company: UInt16, _ bytes: [UInt8]) {
        guard bytes.count <= Self.manufacturerDataLimit.bytes,
              manufacturerData[company] != nil || manufacturerData.count < Self.manufacturerDataLimit.entries else { return }
        manufacturerData[company] = bytes
    }

    /// Records one service data entry, within ``manufacturerDataLimit`` (an entry over it is ignored).
    public mutating func setServiceData(_ service: AdvertisedServiceUUID, _ bytes: [UInt8]) {
        guard bytes.count <= Self.manufacturerDataLimit.bytes,
              serviceData[service] != nil || serviceData.count < Self.manufacturerDataLimit.entries else { return }
        serviceData[service] = bytes
    }
}

/// Which scan results to keep: all given conditions must hold (no conditions: everything).
public struct ScanFilter: Sendable, Equatable {
    public var service: AdvertisedServiceUUID?
    /// Exact local name.
    public var name: String?

    public init(service: AdvertisedServiceUUID? = nil, name: String? = nil) {
        self.service = service
        self.name = name
    }

    public func matches(_ peer: DiscoveredPeer) -> Bool {
        if let service, !peer.services.contains(where: { $0.matches(service) }) { return false }
        if let name, peer.name != name { return false }
        return true
    }
}
