/// Which GATT service a msgpipe peripheral exposes and a central looks for: the msgpipe service or the
/// Nordic UART Service (docs/PROTOCOL.md, section 5).
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

    /// The profile named `name` ("msgpipe" or "nus").
    public static func named(_ name: String) -> GATTServiceProfile? {
        [msgpipe, nordicUART].first { $0.name == name }
    }

    /// The attribute database a peripheral serves for this profile.
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
        return GATTDatabase(services: [GATTService(uuid: service, characteristics: characteristics)])
    }
}
