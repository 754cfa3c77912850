/// Which GATT service a msgpipe peripheral exposes and a central looks for: the msgpipe service, the
/// Nordic UART Service, or a custom layout (`custom:SERVICE:WRITE:NOTIFY`, e.g. a phone app's own UUIDs)
/// (docs/PROTOCOL.md, section 5).
public struct GATTServiceProfile: Sendable, Equatable {
    public var name: String
    public var service: BluetoothUUID
    /// Central to peripheral: write and write without response.
    public var rx: BluetoothUUID
    /// Peripheral to central: notify (and indicate for msgpipe).
    public var tx: BluetoothUUID
    /// The read-only info characteristic, if the profile has one.
    public var info: BluetoothUUID?
    public var txProperties: GATTCharacteristicProperties

    /// The msgpipe service: 4D500001-8C5D-4E2B-9F1A-6D7367706970 ("msgpip" in the last group), RX ...0002,
    /// TX ...0003, info ...0004.
    public static let msgpipe = GATTServiceProfile(
        name: "msgpipe",
        service: BluetoothUUID("4D500001-8C5D-4E2B-9F1A-6D7367706970")!,
        rx: BluetoothUUID("4D500002-8C5D-4E2B-9F1A-6D7367706970")!,
        tx: BluetoothUUID("4D500003-8C5D-4E2B-9F1A-6D7367706970")!,
        info: BluetoothUUID("4D500004-8C5D-4E2B-9F1A-6D7367706970")!,
        txProperties: [.notify, .indicate])

    /// The Nordic UART Service: 6E400001-B5A3-F393-E0A9-E50E24DCCA9E, RX 6E400002, TX 6E400003 (notify).
    public static let nordicUART = GATTServiceProfile(
        name: "nus",
        service: BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!,
        rx: BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!,
        tx: BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")!,
        info: nil,
        txProperties: [.notify])

    /// Apple's convention for a service's LE credit-based channel: a readable characteristic holding the PSM,
    /// 2 bytes little-endian, in the service that owns the channel (any profile's, when a channel is open).
    public static let channelPSM = BluetoothUUID("ABDD3056-28FA-441D-A470-55A75A52553A")!

    /// The ``channelPSM`` characteristic's value for `psm`: 2 bytes, little-endian (Apple's convention).
    public static func channelPSMValue(_ psm: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: psm), UInt8(psm >> 8)]
    }

    /// The PSM a ``channelPSM`` value names: its first 2 bytes, little-endian, when that is an LE PSM
    /// (0x0001-0x00FF); nil for a shorter value, 0 or a PSM no LE channel can have.
    public static func channelPSM(fromValue value: [UInt8]) -> UInt16? {
        guard value.count >= 2 else { return nil }
        let psm = UInt16(value[0]) | UInt16(value[1]) << 8
        return (1...0xFF).contains(psm) ? psm : nil
    }

    /// The profile named `name` ("msgpipe" or "nus").
    public static func named(_ name: String) -> GATTServiceProfile? {
        [msgpipe, nordicUART].first { $0.name == name }
    }

    /// A custom layout: `service` with `write` (the central writes: write and write without response) and
    /// `notify` (the peripheral notifies); no info characteristic, so formats are not checked.
    public static func custom(service: BluetoothUUID, write: BluetoothUUID, notify: BluetoothUUID) -> GATTServiceProfile {
        GATTServiceProfile(
            name: "custom:\(service):\(write):\(notify)", service: service, rx: write, tx: notify, info: nil,
            txProperties: [.notify])
    }

    /// Parses a `--profile` value: "msgpipe", "nus", or "custom:SERVICE:WRITE:NOTIFY" with 16-bit ("FFF0")
    /// or 128-bit (8-4-4-4-12) UUIDs, three different ones.
    public static func parse(_ text: String) throws(GATTProfileError) -> GATTServiceProfile {
        if let profile = named(text) { return profile }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.first == "custom" else { throw .unknownName(text) }
        guard fields.count == 4 else { throw .customFieldCount(fields.count - 1) }
        var uuids: [BluetoothUUID] = []
        for (role, field) in zip(["SERVICE", "WRITE", "NOTIFY"], fields.dropFirst()) {
            guard let uuid = BluetoothUUID(String(field)) else { throw .invalidUUID(role: role, String(field)) }
            uuids.append(uuid)
        }
        guard Set(uuids).count == 3 else { throw .repeatedUUID }
        return custom(service: uuids[0], write: uuids[1], notify: uuids[2])
    }

    /// The attribute database a peripheral serves for this profile: RX, TX, the info characteristic if the
    /// profile has one, and the ``channelPSM`` characteristic when `info` names a channel.
    public func makeDatabase(info: MsgPipeServiceInfo) -> GATTDatabase {
        var characteristics = [
            GATTCharacteristic(uuid: rx, properties: [.write, .writeWithoutResponse], permissions: [.write],
                               userDescription: "RX"),
            GATTCharacteristic(uuid: tx, properties: txProperties, permissions: [], userDescription: "TX"),
        ]
        if let infoUUID = self.info {
            characteristics.append(GATTCharacteristic(uuid: infoUUID, properties: [.read], permissions: [.read],
                                                      value: info.bytes, userDescription: "info"))
        }
        if let psm = info.psm {
            characteristics.append(GATTCharacteristic(uuid: Self.channelPSM, properties: [.read], permissions: [.read],
                                                      value: Self.channelPSMValue(psm)))
        }
        return GATTDatabase(services: [GATTService(uuid: service, characteristics: characteristics)])
    }
}
