import BluetoothCore
import GATT
import SDBus

/// The objects a msgpipe peripheral exports for bluetoothd under `root`: the application (an ObjectManager at
/// `root/app`) with the msgpipe service, its write (rx) and notify (tx) characteristics answered by
/// AcquireWrite and AcquireNotify, the read-only info and PSM values, the pairing agent when there is one, and
/// the advertisement at `root/advertisement0`. Registering them with bluetoothd is ``BlueZRegistration``'s job.
struct BlueZGATTApplication {
    let root: String
    let profile: GATTServiceProfile
    let info: MsgPipeServiceInfo
    let localName: String
    let security: L2CAPSecurityLevel

    var app: String { root + "/app" }
    var advertisement: String { root + "/advertisement0" }
    /// Just Works pairing needs an agent that confirms: ours, for medium. Not for high: a NoInputNoOutput agent
    /// cannot authenticate, and as the default agent it would also set the adapter's IO capability to
    /// NoInputNoOutput (src/agent.c set_io_cap) and take the pairing away from an agent with input
    /// (bluetoothctl's) that can.
    var agent: String? { security == .medium ? root + "/agent" : nil }

    /// Exports every object on `bus`; `acquire` answers AcquireWrite (`notify` false) and AcquireNotify. The
    /// registrations end the exports when cancelled.
    func export(
        on bus: DBusConnection, acquire: @escaping @Sendable (DBusMethodCall, _ notify: Bool) throws(DBusError) -> [DBusValue]
    ) async throws(DBusError) -> [DBusRegistration] {
        let service = app + "/service0"
        let flags = Self.characteristicFlags(profile: profile, security: security)
        var exported = [try await bus.addObjectManager(at: app)]
        if let agent { exported.append(try await bus.export(BlueZJustWorksAgent.interface, at: agent)) }
        exported.append(try await bus.export(DBusInterface(name: "org.bluez.GattService1", properties: [
            DBusProperty("UUID", .string(profile.service.description)), DBusProperty("Primary", .boolean(true)),
        ]), at: service))
        exported.append(try await bus.export(DBusInterface(
            name: "org.bluez.GattCharacteristic1",
            methods: [
                DBusMethod("AcquireWrite", input: "a{sv}", output: "hq") { call throws(DBusError) in
                    try acquire(call, false)
                },
                DBusMethod("WriteValue", input: "aya{sv}") { _ throws(DBusError) in
                    throw .remote(name: "org.bluez.Error.NotSupported", message: "write through AcquireWrite")
                },
            ],
            properties: [
                DBusProperty("UUID", .string(profile.rx.description)), DBusProperty("Service", .objectPath(service)),
                DBusProperty("Flags", .strings(flags.rx)),
                DBusProperty("WriteAcquired", .boolean(false)),
            ]), at: service + "/char0"))
        exported.append(try await bus.export(DBusInterface(
            name: "org.bluez.GattCharacteristic1",
            methods: [
                DBusMethod("AcquireNotify", input: "a{sv}", output: "hq") { call throws(DBusError) in
                    try acquire(call, true)
                },
                DBusMethod("StartNotify") { _ throws(DBusError) in
                    throw .remote(name: "org.bluez.Error.NotSupported", message: "notify through AcquireNotify")
                },
                DBusMethod("StopNotify") { _ in [] },
            ],
            properties: [
                DBusProperty("UUID", .string(profile.tx.description)), DBusProperty("Service", .objectPath(service)),
                DBusProperty("Flags", .strings(flags.tx)), DBusProperty("NotifyAcquired", .boolean(false)),
            ]), at: service + "/char1"))
        // Read-only values: the info characteristic, and the channel's PSM (Apple's convention) when open.
        var readOnly: [(BluetoothUUID, [UInt8])] = profile.info.map { [($0, info.bytes)] } ?? []
        if let psm = info.psm {
            readOnly.append((GATTServiceProfile.channelPSM, GATTServiceProfile.channelPSMValue(psm)))
        }
        for (index, (uuid, value)) in readOnly.enumerated() {
            exported.append(try await bus.export(DBusInterface(
                name: "org.bluez.GattCharacteristic1",
                methods: [DBusMethod("ReadValue", input: "a{sv}", output: "ay") { call throws(DBusError) in
                    let offset = Int(call.arguments.first?.stringKeyed?["offset"]?.uint16Value ?? 0)
                    guard offset <= value.count else {
                        throw .remote(name: "org.bluez.Error.InvalidOffset", message: "offset \(offset)")
                    }
                    return [.bytes(Array(value[offset...]))]
                }],
                properties: [
                    DBusProperty("UUID", .string(uuid.description)), DBusProperty("Service", .objectPath(service)),
                    DBusProperty("Flags", .strings(["read"])),
                ]), at: service + "/char\(2 + index)"))
        }
        exported.append(try await bus.export(DBusInterface(
            name: "org.bluez.LEAdvertisement1", methods: [DBusMethod("Release") { _ in [] }],
            properties: [
                DBusProperty("Type", .string("peripheral")), DBusProperty("LocalName", .string(localName)),
                DBusProperty("ServiceUUIDs", .strings([profile.service.description])),
                // LE General Discoverable in the flags: bluetoothd's own unfiltered discovery (a desktop's
                // scan, bluetoothctl's `scan on`) lists only discoverable advertisers (src/adapter.c).
                DBusProperty("Discoverable", .boolean(true)),
            ]), at: advertisement))
        return exported
    }

    /// The flags of the characteristic the central writes (rx) and the one we notify (tx) for `security`.
    /// The "encrypt-" prefixes put the requirement on the value's permission; "write-without-response" only
    /// adds the property. bluetoothd answers a Write Request on a link that is not secure enough (the central
    /// then pairs) but drops such a Write Command silently. No message is lost to that: tx puts the same
    /// requirement on the CCC descriptor (BlueZ 5.63 and later), a subscription is a Write Request, and a link is
    /// handed out only once the central subscribed. The info characteristic stays plain "read": discovery must
    /// never need security.
    static func characteristicFlags(profile: GATTServiceProfile, security: L2CAPSecurityLevel) -> (rx: [String], tx: [String]) {
        let prefix = switch security {
        case .low: ""
        case .medium: "encrypt-"
        case .high: "encrypt-authenticated-"
        }
        let tx = (profile.txProperties.contains(.notify) ? [prefix + "notify"] : [])
            + (profile.txProperties.contains(.indicate) ? [prefix + "indicate"] : [])
        return ([prefix + "write", "write-without-response"], tx)
    }
}
