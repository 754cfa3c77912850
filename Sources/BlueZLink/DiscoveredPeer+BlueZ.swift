public import BluetoothCore
public import SDBus

/// Scan reports from bluetoothd's `Device1` objects: the same ``DiscoveredPeer`` the kernel scanner yields,
/// so `msgpipe scan` prints either unchanged.
extension DiscoveredPeer {
    /// Most service UUIDs kept per peer, and UTF-8 bytes of a name (the spec's 248).
    public static let bluezLimits = (services: 64, nameBytes: 248)

    /// A peer for the `Device1` object at `path` (address from the path until the properties say more),
    /// RSSI unknown (127) until one is reported.
    public init?(bluezDevice path: String) {
        guard let last = path.split(separator: "/").last, last.hasPrefix("dev_"),
              let address = BluetoothAddress(String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })) else { return nil }
        self.init(peer: BluetoothPeer(address: address), rssi: 127)
    }

    /// Applies `Device1` properties as bluetoothd reports them, whole (GetManagedObjects, InterfacesAdded)
    /// or only the changed ones (PropertiesChanged). A value of the wrong type or over a limit is ignored.
    public mutating func merge(bluezDevice properties: [String: DBusValue]) {
        if let text = properties["Address"]?.stringValue, let address = BluetoothAddress(text) { peer.address = address }
        if let type = properties["AddressType"]?.stringValue { peer.type = type == "random" ? .leRandom : .lePublic }
        if let advertised = properties["Name"]?.stringValue {
            name = Self.bounded(advertised)
        } else if name == nil, let alias = properties["Alias"]?.stringValue,
                  alias != String(peer.address.description.map { $0 == ":" ? "-" : $0 }) {
            // Without a Name bluetoothd sets Alias to the address with dashes: that is no name.
            name = Self.bounded(alias)
        }
        if case let .int16(value)? = properties["RSSI"] { rssi = Int8(clamping: value) }
        if let uuids = properties["UUIDs"]?.stringArray {
            for text in uuids.prefix(Self.bluezLimits.services) {
                guard let uuid = AdvertisedServiceUUID(bluez: text), !services.contains(where: { $0.matches(uuid) }),
                      services.count < Self.bluezLimits.services else { continue }
                services.append(uuid)
            }
        }
        for entry in properties["ManufacturerData"]?.dictionaryEntries ?? [] {
            guard case let .uint16(company) = entry.key, let bytes = entry.value.unwrapped.bytesValue else { continue }
            setManufacturerData(company: company, bytes)
        }
        for entry in properties["ServiceData"]?.dictionaryEntries ?? [] {
            guard let text = entry.key.stringValue, let uuid = AdvertisedServiceUUID(bluez: text),
                  let bytes = entry.value.unwrapped.bytesValue else { continue }
            setServiceData(uuid, bytes)
        }
    }

    /// True once bluetoothd reported an RSSI: the device was heard advertising, not only remembered.
    public var wasHeard: Bool { rssi != 127 }

    private static func bounded(_ text: String) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.count > bluezLimits.nameBytes else { return text }
        var cut = bluezLimits.nameBytes
        while cut > 0, utf8[cut] & 0xC0 == 0x80 { cut -= 1 }
        return String(decoding: utf8[..<cut], as: UTF8.self)
    }
}

extension AdvertisedServiceUUID {
    /// A UUID as bluetoothd writes it (always the 128-bit form, lowercase), shortened to 16 or 32 bits when it
    /// is in the Bluetooth Base range, as the kernel scanner reports advertised ones.
    public init?(bluez text: String) {
        guard let full = AdvertisedServiceUUID(text) else { return nil }
        let bytes = full.fullBytes
        guard full.littleEndianBytes.count == 16, Array(bytes[0..<12]) == Array(Self.baseLittleEndian[0..<12]) else {
            self = full
            return
        }
        let short = bytes[14] == 0 && bytes[15] == 0 ? Array(bytes[12..<14]) : Array(bytes[12..<16])
        guard let shortened = AdvertisedServiceUUID(littleEndianBytes: short) else { return nil }
        self = shortened
    }
}
