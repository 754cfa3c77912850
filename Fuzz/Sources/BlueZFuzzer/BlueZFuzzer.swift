import BluetoothCore
import BlueZLink
import SDBus
import FuzzSupport
import GATT

/// What msgpipe reads from bluetoothd's D-Bus messages, whose contents come partly from radio peers
/// (advertising data, names, UUIDs). sd-bus decodes the wire, so the target builds the ``DBusValue`` trees it
/// would hand over from a script (``DBusValueScript``) and feeds them to BlueZLink's public consumers:
///
/// 1. Every value: the accessors (`stringValue`, `stringKeyed`, `stringArray`, ...) agree with the value, and
///    the value writes back to a script that reads back equal.
/// 2. The input is a scan filter (a byte: bit 0, a service UUID string follows; bit 1, a name) and messages,
///    each a kind byte (mod 5) and its arguments: a GetManagedObjects reply (path → interface → properties),
///    an InterfacesAdded signal, a PropertiesChanged signal (its path string, then the arguments), a method
///    reply (AcquireWrite/AcquireNotify's (h, q), GetAll) or a method call from bluetoothd (AcquireWrite,
///    AcquireNotify and ReadValue options). Device1 properties, whole or changed, merge in sequence into
///    ``DiscoveredPeer``s as ``BlueZDiscovery`` and ``BlueZCentral`` merge them: every merge keeps the bounds
///    (``DiscoveredPeer/bluezLimits``, ``DiscoveredPeer/manufacturerDataLimit``), applies what it was given,
///    and changes nothing when repeated. UUIDs, addresses and device paths parse back from what they print;
///    an MTU gives packet sizes within ATT's.
/// 3. The input's first bytes as `bluetoothd --version`'s output (``BlueZVersion``).
///
/// The script's bounds keep a message's work bounded by its size, so an input's is by its length.
enum BlueZFuzzTarget {
    enum MessageKind: UInt8, CaseIterable {
        case managedObjects, interfacesAdded, propertiesChanged, reply, call
    }

    static let adapter = "/org/bluez/hci0"
    /// The device a central connected to: GetAll replies merge into it.
    static let centralDevice = "/org/bluez/hci0/dev_C0_11_22_33_44_55"

    static func run(_ input: [UInt8]) {
        checkVersion(input)
        var script = DBusValueScript(input)
        let filterFlags = script.byte()
        let service = filterFlags & 1 != 0 ? script.string() : nil
        let name = filterFlags & 2 != 0 ? script.string() : nil
        if let service { checkUUID(service) }
        var discovery = DiscoveryModel(filter: ScanFilter(service: service.flatMap { AdvertisedServiceUUID(bluez: $0) },
                                                          name: name))
        guard var central = DiscoveredPeer(bluezDevice: centralDevice) else { fatalError("\(centralDevice) is no device") }
        while !script.isAtEnd {
            let kind = MessageKind.allCases[Int(script.byte()) % MessageKind.allCases.count]
            let path = kind == .propertiesChanged ? script.string() : ""
            let arguments = script.arguments()
            check(arguments)
            switch kind {
            case .managedObjects: managedObjects(arguments, discovery: &discovery)
            case .interfacesAdded: interfacesAdded(arguments, discovery: &discovery)
            case .propertiesChanged: propertiesChanged(path: path, arguments, discovery: &discovery)
            case .reply: reply(arguments, central: &central)
            case .call: call(arguments)
            }
        }
        discovery.checkBounds()
    }

    // MARK: - Messages

    /// GetManagedObjects' a{oa{sa{sv}}}, read as `DBusConnection.managedObjects` reads it (nil where it throws).
    static func managedObjects(_ reply: [DBusValue]) -> [String: [String: [String: DBusValue]]]? {
        guard reply.count == 1, let objects = reply[0].dictionaryEntries else { return nil }
        var tree: [String: [String: [String: DBusValue]]] = [:]
        for object in objects {
            guard let objectPath = object.key.stringValue, let interfaces = object.value.dictionaryEntries else {
                return nil
            }
            var byInterface: [String: [String: DBusValue]] = [:]
            for interface in interfaces {
                guard let name = interface.key.stringValue, let properties = interface.value.stringKeyed else { return nil }
                byInterface[name] = properties
            }
            tree[objectPath] = byInterface
        }
        return tree
    }

    /// Whole Device1 objects to the discovery; what the central and adapter lookups read of the others.
    static func managedObjects(_ reply: [DBusValue], discovery: inout DiscoveryModel) {
        guard let objects = managedObjects(reply) else { return }
        for path in objects.keys.sorted() {
            guard let interfaces = objects[path] else { continue }
            checkPath(path)
            if let device = interfaces["org.bluez.Device1"] { discovery.apply(path: path, properties: device) }
            if let address = interfaces["org.bluez.Adapter1"]?["Address"]?.stringValue { checkAddress(address) }
            for interface in ["org.bluez.GattService1", "org.bluez.GattCharacteristic1"] {
                guard let properties = interfaces[interface] else { continue }
                if let uuid = properties["UUID"]?.stringValue { checkUUID(uuid) }
                if let mtu = properties["MTU"]?.uint16Value { checkMTU(Int(mtu)) }
            }
        }
    }

    /// InterfacesAdded (o, a{sa{sv}}): a whole Device1 to the discovery.
    static func interfacesAdded(_ arguments: [DBusValue], discovery: inout DiscoveryModel) {
        guard arguments.count == 2, let path = arguments[0].stringValue else { return }
        checkPath(path)
        guard let properties = arguments[1].stringKeyed?["org.bluez.Device1"]?.stringKeyed else { return }
        discovery.apply(path: path, properties: properties)
    }

    /// PropertiesChanged (s, a{sv}, as) from `path`: the changed Device1 properties to the discovery.
    static func propertiesChanged(path: String, _ arguments: [DBusValue], discovery: inout DiscoveryModel) {
        checkPath(path)
        guard arguments.count >= 2, let changed = arguments[1].stringKeyed else { return }
        discovery.apply(path: path, properties: changed)
    }

    /// AcquireWrite/AcquireNotify's (h, q) as the central reads it; GetAll of the connected Device1.
    static func reply(_ arguments: [DBusValue], central: inout DiscoveredPeer) {
        if arguments.count == 2 {
            require(arguments[0].fileDescriptorValue == nil, "a descriptor the fuzzer did not make")
            if let mtu = arguments[1].uint16Value { checkMTU(Int(mtu)) }
        }
        if arguments.count == 1, let properties = arguments[0].stringKeyed { merge(properties, into: &central) }
    }

    /// bluetoothd's AcquireWrite/AcquireNotify/ReadValue options (a{sv}) as the peripheral reads them.
    static func call(_ arguments: [DBusValue]) {
        guard let options = arguments.first?.stringKeyed else { return }
        if let device = options["device"]?.stringValue { checkPath(device) }
        checkMTU(Int(options["mtu"]?.uint16Value ?? 23))
    }

    // MARK: - Device1 properties

    /// Merges `properties` into `peer` and checks the result against what they said.
    static func merge(_ properties: [String: DBusValue], into peer: inout DiscoveredPeer) {
        let before = peer
        peer.merge(bluezDevice: properties)
        checkBounds(peer)
        var again = peer
        again.merge(bluezDevice: properties)
        require(again == peer, "merging the same properties twice changed \(peer) to \(again)")

        if let text = properties["Address"]?.stringValue { checkAddress(text) }
        let address = properties["Address"]?.stringValue.flatMap { BluetoothAddress($0) } ?? before.peer.address
        require(peer.peer.address == address, "address \(peer.peer.address) instead of \(address)")
        let type = properties["AddressType"]?.stringValue.map { $0 == "random" ? BluetoothAddressType.leRandom : .lePublic }
        require(peer.peer.type == type ?? before.peer.type, "address type \(peer.peer.type) after \(properties)")

        if let advertised = properties["Name"]?.stringValue {
            checkBounded(peer.name, of: advertised)
        } else if before.name == nil, let alias = properties["Alias"]?.stringValue,
                  alias != String(address.description.map { $0 == ":" ? "-" : $0 }) {
            checkBounded(peer.name, of: alias)
        } else {
            require(peer.name == before.name, "name \(String(describing: peer.name)) from neither Name nor Alias")
        }

        if case let .int16(rssi)? = properties["RSSI"] {
            require(peer.rssi == Int8(clamping: rssi), "RSSI \(rssi) kept as \(peer.rssi)")
        } else {
            require(peer.rssi == before.rssi, "RSSI changed to \(peer.rssi) without one")
        }

        require(peer.services.starts(with: before.services), "services \(before.services) lost in \(peer.services)")
        let limit = DiscoveredPeer.bluezLimits.services
        for text in properties["UUIDs"]?.stringArray ?? [] {
            checkUUID(text)
        }
        for text in (properties["UUIDs"]?.stringArray ?? []).prefix(limit) {
            guard let uuid = AdvertisedServiceUUID(bluez: text) else { continue }
            require(peer.services.contains { $0.matches(uuid) } || peer.services.count == limit, "UUID \(text) dropped")
        }
        if properties["UUIDs"]?.stringArray == nil {
            require(peer.services == before.services, "services changed without UUIDs")
        }

        var company: [UInt16: [UInt8]] = [:]
        for entry in properties["ManufacturerData"]?.dictionaryEntries ?? [] {
            guard case let .uint16(key) = entry.key, let bytes = entry.value.unwrapped.bytesValue,
                  bytes.count <= DiscoveredPeer.manufacturerDataLimit.bytes else { continue }
            company[key] = bytes
        }
        checkData(peer.manufacturerData, before: before.manufacturerData, offered: company, what: "manufacturer data")
        var service: [AdvertisedServiceUUID: [UInt8]] = [:]
        for entry in properties["ServiceData"]?.dictionaryEntries ?? [] {
            guard let text = entry.key.stringValue else { continue }
            checkUUID(text)
            guard let uuid = AdvertisedServiceUUID(bluez: text), let bytes = entry.value.unwrapped.bytesValue,
                  bytes.count <= DiscoveredPeer.manufacturerDataLimit.bytes else { continue }
            service[uuid] = bytes
        }
        checkData(peer.serviceData, before: before.serviceData, offered: service, what: "service data")
    }

    /// Data by key after a merge: each entry offered (its last value within the byte limit) is kept unless the
    /// entries were full, and no other key appeared.
    static func checkData<Key: Hashable>(
        _ data: [Key: [UInt8]], before: [Key: [UInt8]], offered: [Key: [UInt8]], what: String
    ) {
        for (key, bytes) in offered {
            if let kept = data[key] {
                require(kept == bytes, "\(what) \(key): kept \(kept.count) bytes, not the last \(bytes.count) offered")
            } else {
                require(data.count == DiscoveredPeer.manufacturerDataLimit.entries, "\(what) \(key) dropped")
            }
        }
        for key in data.keys {
            require(before[key] != nil || offered[key] != nil, "\(what) \(key) appeared from nowhere")
            if offered[key] == nil { require(data[key] == before[key], "\(what) \(key) changed without an entry") }
        }
    }

    /// A name kept from `text`: all of it within the limit, else a prefix cut at a character's first byte.
    static func checkBounded(_ name: String?, of text: String) {
        guard let name else { fatalError("the name \(text) was not kept") }
        let kept = Array(name.utf8)
        let given = Array(text.utf8)
        let limit = DiscoveredPeer.bluezLimits.nameBytes
        require(given.starts(with: kept), "name \(kept) is no prefix of \(given)")
        if given.count <= limit {
            require(kept.count == given.count, "name of \(given.count) bytes cut to \(kept.count)")
        } else {
            require(kept.count <= limit && kept.count > limit - 4 && given[kept.count] & 0xC0 != 0x80,
                    "name of \(given.count) bytes cut to \(kept.count)")
        }
    }

    /// Every bound a peer keeps whatever it was sent, and the scan filters it must match.
    static func checkBounds(_ peer: DiscoveredPeer) {
        let nameBytes = peer.name?.utf8.count ?? 0
        require(nameBytes <= DiscoveredPeer.bluezLimits.nameBytes, "a name of \(nameBytes) bytes")
        require(peer.services.count <= DiscoveredPeer.bluezLimits.services, "\(peer.services.count) services")
        require(Set(peer.services.map(\.fullBytes)).count == peer.services.count, "a service twice in \(peer.services)")
        for data in [Array(peer.manufacturerData.values), Array(peer.serviceData.values)] {
            require(data.count <= DiscoveredPeer.manufacturerDataLimit.entries, "\(data.count) data entries")
            require(data.allSatisfy { $0.count <= DiscoveredPeer.manufacturerDataLimit.bytes }, "a data entry over the limit")
        }
        require(ScanFilter().matches(peer), "the empty filter refused \(peer)")
        for service in peer.services.prefix(4) {
            require(ScanFilter(service: service, name: peer.name).matches(peer), "the filter on \(service) refused \(peer)")
        }
    }

    // MARK: - UUIDs, addresses, paths, MTUs

    /// A UUID string: bluetoothd's form parses as the text does, shortened exactly when it is in the Base
    /// range, and prints as text that parses back; GATT's parser agrees where both parse.
    static func checkUUID(_ text: String) {
        let parsed = AdvertisedServiceUUID(text)
        let uuid = AdvertisedServiceUUID(bluez: text)
        require((parsed == nil) == (uuid == nil),
                "\(text) parses as \(String(describing: parsed)) but bluez: gives \(String(describing: uuid))")
        if let parsed, let uuid {
            require(uuid.matches(parsed), "\(text) shortened to \(uuid), another UUID")
            require(AdvertisedServiceUUID(uuid.description) == uuid, "\(uuid) does not parse back from its description")
            let inBase = parsed.fullBytes[0..<12].elementsEqual(AdvertisedServiceUUID(uuid16: 0).fullBytes[0..<12])
            require(inBase == (uuid.littleEndianBytes.count < 16), "\(text) read as \(uuid.littleEndianBytes.count) bytes")
        }
        if let gatt = BluetoothUUID(text) {
            require(BluetoothUUID(gatt.description) == gatt, "\(gatt) does not parse back from its description")
            if let parsed {
                let littleEndian = (0..<16).map { UInt8(truncatingIfNeeded: gatt.value >> (8 * $0)) }
                require(parsed.fullBytes == littleEndian, "\(text) is \(gatt) to GATT but \(parsed) to the scanner")
            }
        }
    }

    /// `bluetoothd --version`'s output as BlueZVersion reads it (the first 32 bytes at most): a version that
    /// parses prints back as itself, and nothing past the first line or the 32nd byte changes the answer.
    static func checkVersion(_ output: [UInt8]) {
        let version = BlueZVersion(parsing: output)
        require(version == BlueZVersion(parsing: output.prefix(32)), "bytes past the 32nd changed the version")
        guard let version else { return }
        require(BlueZVersion(parsing: Array(version.description.utf8)) == version, "\(version) does not parse back")
        require((0...9999).contains(version.major) && (0...9999).contains(version.minor), "\(version) out of range")
    }

    /// An address string that parses prints back as itself parses, and makes a device path that gives it back.
    static func checkAddress(_ text: String) {
        guard let address = BluetoothAddress(text) else { return }
        require(BluetoothAddress(address.description) == address, "\(address) does not parse back")
        let path = BlueZAdapter.devicePath(adapter: "hci0", address: address)
        require(DiscoveredPeer(bluezDevice: path)?.peer.address == address, "\(path) does not give \(address)")
        require(BlueZPeripheral.peerAddress(devicePath: path) == address.description, "\(path) names another address")
    }

    /// Any object path: a device path gives a fresh, unheard peer with the address the peripheral reads.
    static func checkPath(_ path: String) {
        let address = BlueZPeripheral.peerAddress(devicePath: path)
        _ = BlueZAdapter.name(path: path)
        guard let peer = DiscoveredPeer(bluezDevice: path) else { return }
        require(BluetoothAddress(address) == peer.peer.address,
                "\(path): \(peer.peer.address) but the peripheral reads \(address)")
        require(!peer.wasHeard && peer.name == nil && peer.services.isEmpty && peer.manufacturerData.isEmpty
                && peer.serviceData.isEmpty, "\(path) made \(peer)")
        checkAddress(address)
    }

    /// Packet sizes for an ATT MTU bluetoothd reported: within ATT's value limits, all of ATT_MTU - 5 (or - 3
    /// for writes) below the caps, never shrinking as the MTU grows.
    static func checkMTU(_ mtu: Int) {
        let packet = AcquiredLink.maximumPacketSize(mtu: mtu)
        let write = BlueZCentral.maximumWriteSize(mtu: mtu)
        require((18...512).contains(packet) && packet <= max(23, mtu) - 5, "packets of \(packet) bytes at MTU \(mtu)")
        require((20...510).contains(write) && write <= max(23, mtu) - 3, "writes of \(write) bytes at MTU \(mtu)")
        require(!(23...517).contains(mtu) || packet == mtu - 5, "packets of \(packet) bytes at MTU \(mtu)")
        require(!(23...513).contains(mtu) || write == mtu - 3, "writes of \(write) bytes at MTU \(mtu)")
        require(packet >= AcquiredLink.maximumPacketSize(mtu: mtu - 1)
                && write >= BlueZCentral.maximumWriteSize(mtu: mtu - 1), "packet sizes shrink above MTU \(mtu - 1)")
    }

    // MARK: - Values

    /// The arguments write back to a script that reads back equal; every accessor agrees with every value.
    static func check(_ arguments: [DBusValue]) {
        var writer = DBusValueScriptWriter()
        writer.arguments(arguments)
        for argument in arguments { checkAccessors(argument) }
    }

    static func checkAccessors(_ value: DBusValue) {
        require(!value.signature.isEmpty, "\(value) has no signature")
        switch value {
        case .string, .objectPath, .signature: require(value.stringValue != nil, "\(value) has no string")
        default: require(value.stringValue == nil, "\(value) has a string")
        }
        if case .variant = value.unwrapped { fatalError("\(value) unwraps to a variant") }
        let elements = value.arrayValues
        switch value {
        case let .bytes(bytes):
            require(elements == bytes.map { .byte($0) }, "ay \(bytes) has elements \(String(describing: elements))")
        case let .array(signature, values):
            require(elements == values, "\(value) has elements \(String(describing: elements))")
            require(values.allSatisfy { $0.signature == signature }, "\(value) holds an element not of type \(signature)")
        default:
            require(elements == nil, "\(value) has elements")
        }
        if let strings = value.stringArray {
            require(elements?.map(\.stringValue) == strings.map(Optional.some), "\(value) has strings \(strings)")
        } else if case let .array(_, values) = value {
            require(!values.allSatisfy { $0.stringValue != nil }, "\(value) has no strings")
        }
        let entries = value.dictionaryEntries
        if case let .dictionary(keySignature, valueSignature, list) = value {
            require(entries == list, "\(value) has entries \(String(describing: entries))")
            require(list.allSatisfy { $0.key.signature == keySignature && $0.value.signature == valueSignature },
                    "\(value) holds an entry not of type \(keySignature)\(valueSignature)")
        } else {
            require(entries == nil, "\(value) has entries")
        }
        if let keyed = value.stringKeyed {
            var seen: Set<String> = []
            for entry in entries ?? [] {
                guard let key = entry.key.stringValue else { fatalError("\(value) is string-keyed, but not by \(entry.key)") }
                if seen.insert(key).inserted {
                    require(keyed[key] == entry.value.unwrapped, "\(key) in \(value) is not its first value unwrapped")
                }
            }
            require(keyed.count == seen.count, "\(value) keyed by \(keyed.count) strings, not \(seen.count)")
        } else if let entries {
            require(!entries.allSatisfy { $0.key.stringValue != nil }, "\(value) is not keyed by its strings")
        }
        switch value {
        case let .array(_, values), let .structure(values):
            for element in values { checkAccessors(element) }
        case let .dictionary(_, _, list):
            for entry in list {
                checkAccessors(entry.key)
                checkAccessors(entry.value)
            }
        case let .variant(inner):
            checkAccessors(inner)
        default:
            break
        }
    }
}

/// ``BlueZDiscovery``'s bookkeeping over the public API (its `apply(path:properties:)` is private): the
/// Device1 objects it remembers and reports, at most ``peerLimit`` of each.
struct DiscoveryModel {
    static let peerLimit = 4
    let filter: ScanFilter
    var peers: [String: DiscoveredPeer] = [:]
    var reported: Set<String> = []

    init(filter: ScanFilter) { self.filter = filter }

    mutating func apply(path: String, properties: [String: DBusValue]) {
        let prefix = BlueZFuzzTarget.adapter + "/dev_"
        guard path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/") else { return }
        guard var peer = peers[path] ?? DiscoveredPeer(bluezDevice: path) else { return }
        BlueZFuzzTarget.merge(properties, into: &peer)
        guard peers[path] != nil || peers.count < Self.peerLimit else { return }
        peers[path] = peer
        guard peer.wasHeard, filter.matches(peer), !reported.contains(path), reported.count < Self.peerLimit else { return }
        reported.insert(path)
    }

    func checkBounds() {
        require(peers.count <= Self.peerLimit && reported.count <= Self.peerLimit, "\(peers.count) peers kept")
        require(reported.allSatisfy { peers[$0] != nil }, "a reported peer was not kept")
    }
}

@main
enum BlueZFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "BlueZFuzzer", seeds: seeds, target: BlueZFuzzTarget.run)
    }

    static let device = "/org/bluez/hci0/dev_C0_11_22_33_44_55"
    static let randomDevice = "/org/bluez/hci0/dev_7A_2B_3C_4D_5E_6F"
    static let msgpipeService = "4d500001-8c5d-4e2b-9f1a-6d7367706970"

    /// Device1 (and Adapter1, GattService1, GattCharacteristic1) properties as bluetoothd 5.7x sends them, in
    /// GetManagedObjects, InterfacesAdded, PropertiesChanged, GetAll and the Acquire calls; then the limits.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let ibeacon: [UInt8] = [0x02, 0x15] + [UInt8](repeating: 0x4D, count: 16) + [0x00, 0x01, 0x00, 0x02, 0xC5]
        let publicDevice: [(String, DBusValue)] = [
            ("Address", .string("C0:11:22:33:44:55")), ("AddressType", .string("public")), ("Name", .string("msgpipe")),
            ("Alias", .string("msgpipe")), ("Paired", .boolean(false)), ("Bonded", .boolean(false)),
            ("Trusted", .boolean(false)), ("Blocked", .boolean(false)), ("LegacyPairing", .boolean(false)),
            ("RSSI", .int16(-58)), ("Connected", .boolean(false)),
            ("UUIDs", .strings(["00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
                                msgpipeService])),
            ("Adapter", .objectPath("/org/bluez/hci0")),
            ("ManufacturerData", manufacturerData([(0x0059, [0x01, 0x02, 0x03]), (0x004C, ibeacon)])),
            ("ServiceData", serviceData([
                ("0000feaa-0000-1000-8000-00805f9b34fb", [0x10, 0xEB, 0x03] + Array("msgpipe".utf8)),
            ])),
            ("TxPower", .int16(8)), ("ServicesResolved", .boolean(false)), ("AdvertisingFlags", .bytes([0x06])),
        ]
        let randomDevice: [(String, DBusValue)] = [
            ("Address", .string("7A:2B:3C:4D:5E:6F")), ("AddressType", .string("random")),
            ("Alias", .string("7A-2B-3C-4D-5E-6F")), ("Paired", .boolean(false)), ("Trusted", .boolean(false)),
            ("Blocked", .boolean(false)), ("LegacyPairing", .boolean(false)), ("RSSI", .int16(-81)),
            ("Connected", .boolean(false)), ("UUIDs", .strings([msgpipeService])),
            ("Adapter", .objectPath("/org/bluez/hci0")), ("ServicesResolved", .boolean(false)),
        ]
        let characteristic = device + "/service000a/char000b"
        let managed = objects([
            ("/org/bluez", [("org.freedesktop.DBus.Introspectable", []), ("org.bluez.AgentManager1", [])]),
            ("/org/bluez/hci0", [("org.bluez.Adapter1", [
                ("Address", .string("00:AA:01:00:00:23")), ("AddressType", .string("public")), ("Name", .string("lab")),
                ("Alias", .string("lab")), ("Class", .uint32(0x7C0104)), ("Powered", .boolean(true)),
                ("Discoverable", .boolean(false)), ("Discovering", .boolean(false)),
                ("UUIDs", .strings(["00001801-0000-1000-8000-00805f9b34fb"])), ("Roles", .strings(["central", "peripheral"])),
            ])]),
            (device, [("org.freedesktop.DBus.Properties", []), ("org.bluez.Device1", publicDevice)]),
            (device + "/service000a", [("org.bluez.GattService1", [
                ("UUID", .string(msgpipeService)), ("Device", .objectPath(device)), ("Primary", .boolean(true)),
                ("Includes", .objectPaths([])), ("Handle", .uint16(0x000A)),
            ])]),
            (characteristic, [("org.bluez.GattCharacteristic1", [
                ("UUID", .string("4d500002-8c5d-4e2b-9f1a-6d7367706970")), ("Service", .objectPath(device + "/service000a")),
                ("Value", .bytes([])), ("Flags", .strings(["write-without-response", "write"])),
                ("WriteAcquired", .boolean(false)), ("MTU", .uint16(247)), ("Handle", .uint16(0x000B)),
            ])]),
            (device + "/service000a/char000d", [("org.bluez.GattCharacteristic1", [
                ("UUID", .string("4d500003-8c5d-4e2b-9f1a-6d7367706970")), ("Service", .objectPath(device + "/service000a")),
                ("Value", .bytes([])), ("Notifying", .boolean(false)), ("Flags", .strings(["notify"])),
                ("NotifyAcquired", .boolean(false)), ("MTU", .uint16(247)), ("Handle", .uint16(0x000D)),
            ])]),
        ])
        let veryLongName = String(repeating: "蓝牙", count: 50)  // 300 UTF-8 bytes
        let cutInsideCharacter = "a" + String(repeating: "é", count: 124)  // 249 bytes; byte 248 inside an é
        let manyUUIDs = (0..<70).map { index in
            let digits = String(index, radix: 16)
            let hex8 = String(repeating: "0", count: 8 - digits.count) + digits
            return index.isMultiple(of: 2) ? hex8 + "-0000-1000-8000-00805f9b34fb" : hex8 + "-8c5d-4e2b-9f1a-6d7367706970"
        }
        let manyCompanies = (0..<20).map { (UInt16(0x0100 + $0), [UInt8(truncatingIfNeeded: $0), 0xA5]) }
        return [
            ("managed-objects", script(filter: [0], [
                (.managedObjects, nil, [managed]),
                (.propertiesChanged, device, [.string("org.bluez.Device1"), .variantDictionary([
                    ("RSSI", .int16(-61)), ("ManufacturerData", manufacturerData([(0x0059, [0x01, 0x02, 0x04])])),
                ]), .strings([])]),
                (.propertiesChanged, device, [.string("org.bluez.Device1"), .variantDictionary([
                    ("Connected", .boolean(true)), ("ServicesResolved", .boolean(true)),
                ]), .strings(["RSSI", "TxPower"])]),
            ])),
            ("interfaces-added", script(filter: [1], strings: [msgpipeService], [
                (.interfacesAdded, nil, [.objectPath(Self.randomDevice), interfaces([
                    ("org.freedesktop.DBus.Introspectable", []), ("org.bluez.Device1", randomDevice),
                    ("org.freedesktop.DBus.Properties", []),
                ])]),
                (.propertiesChanged, Self.randomDevice, [.string("org.bluez.Device1"), .variantDictionary([
                    ("Name", .string("kitchen")), ("Alias", .string("kitchen")), ("RSSI", .int16(-70)), ("TxPower", .int16(4)),
                ]), .strings([])]),
                (.propertiesChanged, Self.randomDevice, [.string("org.bluez.Device1"), .variantDictionary([
                    ("ServiceData", serviceData([("0000feaa-0000-1000-8000-00805f9b34fb", [0x00, 0xF4, 0x11, 0x22])])),
                ]), .strings(["RSSI"])]),
            ])),
            ("replies", script(filter: [2], strings: ["msgpipe"], [
                (.reply, nil, [.int32(9), .uint16(247)]),  // (h, q): the int32 stands in for the descriptor
                (.reply, nil, [.int32(10), .uint16(517)]),
                (.reply, nil, [.variantDictionary(publicDevice.map {
                    $0.0 == "Connected" ? ($0.0, DBusValue.boolean(true)) : $0
                })]),
                (.call, nil, [.variantDictionary([
                    ("device", .objectPath(device)), ("mtu", .uint16(185)), ("link", .string("LE")),
                ])]),
                (.call, nil, [.variantDictionary([
                    ("offset", .uint16(4)), ("device", .objectPath(device)), ("mtu", .uint16(23)),
                ])]),
            ])),
            ("long-names-many-uuids", script(filter: [0], [
                (.interfacesAdded, nil, [.objectPath(Self.randomDevice), interfaces([("org.bluez.Device1", [
                    ("Address", .string("7A:2B:3C:4D:5E:6F")), ("AddressType", .string("random")),
                    ("Name", .string(veryLongName)), ("RSSI", .int16(-300)), ("UUIDs", .strings(manyUUIDs)),
                ])])]),
                (.propertiesChanged, Self.randomDevice, [.string("org.bluez.Device1"), .variantDictionary([
                    ("Name", .string(cutInsideCharacter)),
                ]), .strings([])]),
            ])),
            ("big-data", script(filter: [0], [
                (.interfacesAdded, nil, [.objectPath(device), interfaces([("org.bluez.Device1", [
                    ("RSSI", .int16(-40)),
                    ("ManufacturerData", manufacturerData([(0x0001, [UInt8](repeating: 0x11, count: 1650))] + manyCompanies
                                                          + [(0xFFFF, [UInt8](repeating: 0x22, count: 1651))])),
                    ("ServiceData", serviceData([("180D", [1]), ("0000180d-0000-1000-8000-00805f9b34fb", [2]),
                                                 ("0000FEAA-0000-1000-8000-00805F9B34FB", [3])])),
                ])])]),
                (.propertiesChanged, device, [.string("org.bluez.Device1"), .variantDictionary([
                    ("ManufacturerData", manufacturerData([(0x0001, [0x33]), (0x0200, [0x44])])),
                ]), .strings([])]),
            ])),
        ]
    }

    /// A fuzz input: the filter byte and its strings, then the messages (a path only for PropertiesChanged).
    static func script(
        filter: [UInt8], strings: [String] = [], _ messages: [(BlueZFuzzTarget.MessageKind, String?, [DBusValue])]
    ) -> [UInt8] {
        var writer = DBusValueScriptWriter()
        for byte in filter { writer.byte(byte) }
        for text in strings { writer.string(text) }
        for (kind, path, arguments) in messages {
            writer.byte(kind.rawValue)
            if kind == .propertiesChanged { writer.string(path ?? "") }
            writer.arguments(arguments)
        }
        require(writer.bytes.count <= 4096, "a seed of \(writer.bytes.count) bytes, over fuzz.sh's -max_len")
        return writer.bytes
    }

    /// `a{qv}` of `ay`, as ManufacturerData.
    static func manufacturerData(_ entries: [(UInt16, [UInt8])]) -> DBusValue {
        .dictionary(keySignature: "q", valueSignature: "v",
                    entries.map { DBusDictionaryEntry(key: .uint16($0.0), value: .variant(.bytes($0.1))) })
    }

    /// `a{sv}` of `ay`, as ServiceData.
    static func serviceData(_ entries: [(String, [UInt8])]) -> DBusValue {
        .variantDictionary(entries.map { ($0.0, .bytes($0.1)) })
    }

    /// `a{sa{sv}}`: interface → properties.
    static func interfaces(_ list: [(String, [(String, DBusValue)])]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "a{sv}",
                    list.map { DBusDictionaryEntry(key: .string($0.0), value: .variantDictionary($0.1)) })
    }

    /// `a{oa{sa{sv}}}`: GetManagedObjects' reply.
    static func objects(_ list: [(String, [(String, [(String, DBusValue)])])]) -> DBusValue {
        .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}",
                    list.map { DBusDictionaryEntry(key: .objectPath($0.0), value: interfaces($0.1)) })
    }
}
