// The kernel's half of DiscoveredPeer: what mgmt's Device Found events add to it.
extension DiscoveredPeer {
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
