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

    /// The peer described by a Device Found event. Malformed advertising data keeps what parsed before the
    /// fault (a peer's bad data never aborts a scan).
    public init(_ found: DeviceFound) {
        self.init(peer: found.peer, rssi: found.rssi)
        merge(found)
    }

    /// Updates RSSI, and name and services when the event carries them.
    public mutating func merge(_ found: DeviceFound) {
        rssi = found.rssi
        guard let data = try? found.advertisingData() else { return }
        if let advertisedName = data.localName { name = advertisedName }
        for uuid in (try? data.serviceUUIDs()) ?? [] where !services.contains(where: { $0.matches(uuid) }) {
            services.append(uuid)
        }
        for structure in data.structures where structure.type == 0xFF && structure.data.count >= 2 {
            setManufacturerData(company: UInt16(structure.data[0]) | UInt16(structure.data[1]) << 8,
                                Array(structure.data.dropFirst(2)))
        }
        for structure in data.structures {
            let width = switch structure.type {
            case 0x16: 2
            case 0x20: 4
            case 0x21: 16
            default: 0
            }
            guard width > 0, structure.data.count >= width,
                  let uuid = AdvertisedServiceUUID(littleEndianBytes: Array(structure.data.prefix(width))) else { continue }
            setServiceData(uuid, Array(structure.data.dropFirst(width)))
        }
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

/// LE discovery through the management interface (active scanning: advertising data and scan response
/// arrive merged in one Device Found event).
public enum Scanner {
    /// The time between discovery restarts within one scan.
    static let refreshInterval: Duration = .seconds(4)

    /// Scans `adapter` for `duration`, calling `onMatch` the first time each matching peer is seen
    /// (and again never); returns the matching peers sorted by RSSI, strongest first. With `stopAtFirstMatch`
    /// it returns as soon as one peer matches. Discovery is restarted every ``refreshInterval`` (and
    /// whenever the kernel ends it, after ~10 s) until the duration is over.
    public static func scan(
        adapter: BluetoothAdapter, using management: ManagementSocket, duration: Duration,
        filter: ScanFilter = ScanFilter(), stopAtFirstMatch: Bool = false,
        onMatch: (DiscoveredPeer) -> Void = { _ in }
    ) throws(BluetoothError) -> [DiscoveredPeer] {
        try adapter.requireReadyForLowEnergy()
        let deadline = Deadline.after(duration)
        var peers: [BluetoothPeer: DiscoveredPeer] = [:]
        var reported: Set<BluetoothPeer> = []
        /// Most distinct peers remembered in one scan: a bound on memory in a crowded room.
        let peerLimit = 4096
        var owns = try startDiscovery(adapter, management)
        defer { if owns { _ = try? management.execute(.stopDiscovery(adapter.index)) } }
        var refreshAt = Deadline.after(refreshInterval)
        var ownStops = 0
        scanning: while !deadline.hasPassed {
            if refreshAt.hasPassed {
                // A new discovery resets the controller's duplicate filter: a peer whose first report came
                // without its scan response (so without its name) gets another chance.
                if owns {
                    if (try? management.execute(.stopDiscovery(adapter.index))) != nil { ownStops += 1 }
                    owns = try startDiscovery(adapter, management)
                }
                refreshAt = .after(refreshInterval)
            }
            guard let event = try management.nextEvent(until: min(deadline, refreshAt)) else { continue }
            guard event.controllerIndex == adapter.index else { continue }
            switch event.kind {
            case let .deviceFound(found):
                var peer = peers[found.peer] ?? DiscoveredPeer(peer: found.peer, rssi: found.rssi)
                peer.merge(found)
                if peers[found.peer] != nil || peers.count < peerLimit { peers[found.peer] = peer }
                if filter.matches(peer), !reported.contains(peer.peer) {
                    reported.insert(peer.peer)
                    onMatch(peer)
                    if stopAtFirstMatch { break scanning }
                }
            case .discovering(_, active: false):
                if ownStops > 0 {
                    ownStops -= 1
                } else if !deadline.hasPassed {
                    owns = try startDiscovery(adapter, management)  // the kernel or its owner ended it: go on
                }
            default:
                continue
            }
        }
        return reported.compactMap { peers[$0] }.sorted { ($0.rssi, $1.peer.address) > ($1.rssi, $0.peer.address) }
    }

    /// Starts an LE discovery and returns true; false when another one runs (mgmt Busy: bluetoothd's, another
    /// tool's). Its Device Found events reach every management socket, so the scan uses them, and never stops
    /// a discovery it did not start (that would end the other client's scan).
    private static func startDiscovery(
        _ adapter: BluetoothAdapter, _ management: ManagementSocket
    ) throws(BluetoothError) -> Bool {
        do {
            try management.execute(.startDiscovery(adapter.index))
            return true
        } catch .commandFailed(_, .busy) {
            return false
        }
    }
}
