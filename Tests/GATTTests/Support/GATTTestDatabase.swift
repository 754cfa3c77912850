@testable import GATT
import TestSupport

/// The database every server test runs against:
///
///     0x0001 Primary Service 180F                 0x0005 Primary Service 6E400001-...
///     0x0002   Characteristic read|notify         0x0006   Characteristic write|write-without-response (RX)
///     0x0003   value "battery" (read)             0x0007   value (write only, at most 64 bytes)
///     0x0004   CCCD                               0x0008   Characteristic notify|indicate (TX)
///                                                 0x0009   value (no permissions)
///                                                 0x000A   CCCD
///                                                 0x000B   Characteristic read (info)
///                                                 0x000C   value: 60 bytes 0..59 (read)
///                                                 0x000D   User Description "info"
enum TestDatabase {
    static let rx = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let tx = BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let info = BluetoothUUID("6E400004-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let infoValue = (0..<60).map { UInt8($0) }

    static var database: GATTDatabase {
        GATTDatabase(services: [
            GATTService(uuid: .bit16(0x180F), characteristics: [
                GATTCharacteristic(uuid: .bit16(0x2A19), properties: [.read, .notify], permissions: [.read],
                                   value: Array("battery".utf8)),
            ]),
            GATTService(uuid: service128, characteristics: [
                GATTCharacteristic(uuid: rx, properties: [.write, .writeWithoutResponse], permissions: [.write],
                                   maximumLength: 64),
                GATTCharacteristic(uuid: tx, properties: [.notify, .indicate], permissions: []),
                GATTCharacteristic(uuid: info, properties: [.read], permissions: [.read], value: infoValue,
                                   userDescription: "info"),
            ]),
        ])
    }

    static func server(maximumMTU: Int = 517, prepareQueueLimit: Int = 4) -> GATTServer {
        GATTServer(database: database, configuration: .init(maximumMTU: maximumMTU, prepareQueueLimit: prepareQueueLimit))
    }
}

extension GATTServer {
    /// Feeds one request (hex) and returns the response bytes (marking it sent) and the event.
    mutating func exchange(_ hex: String, now: Duration = .zero) -> (response: [UInt8]?, event: GATTServerEvent?) {
        let reaction = receive(bytes(hex)[...], now: now)
        if reaction.response != nil { responseSent() }
        return (reaction.response, reaction.event)
    }
}
