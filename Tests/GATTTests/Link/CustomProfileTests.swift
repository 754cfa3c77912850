@testable import GATT
import Testing
import TestSupport

/// `--profile custom:SERVICE:WRITE:NOTIFY`: the seeds' own layouts (seed 000: FFF0/FFF2/FFF1; seed 003's QX
/// app: 68753A44-…C00000 with write …C22222 and notify …C11111).
@Suite struct CustomProfileTests {
    static let fff0 = "custom:FFF0:FFF2:FFF1"
    static let qx = "custom:68753A44-4D6F-1226-9C60-0050E4C00000:68753A44-4D6F-1226-9C60-0050E4C22222:68753A44-4D6F-1226-9C60-0050E4C11111"

    @Test func sixteenBitLayoutParses() throws {
        let profile = try GATTServiceProfile.parse(Self.fff0)
        #expect(profile.service == .bit16(0xFFF0))
        #expect(profile.rx == .bit16(0xFFF2))
        #expect(profile.tx == .bit16(0xFFF1))
        #expect(profile.info == nil)
        #expect(profile.txProperties == [.notify])
        #expect(profile.name == Self.fff0)
        #expect(try GATTServiceProfile.parse("custom:fff0:fff2:fff1") == profile, "hex digits in either case")
    }

    @Test func oneHundredTwentyEightBitLayoutParses() throws {
        let profile = try GATTServiceProfile.parse(Self.qx)
        #expect(profile.service.value == 0x68753A44_4D6F_1226_9C60_0050E4C00000)
        #expect(profile.rx.value == 0x68753A44_4D6F_1226_9C60_0050E4C22222)
        #expect(profile.tx.value == 0x68753A44_4D6F_1226_9C60_0050E4C11111)
        #expect(profile.name == Self.qx)
        #expect(try GATTServiceProfile.parse(profile.name) == profile, "the name parses back")
    }

    @Test func namedProfilesStillParse() throws {
        #expect(try GATTServiceProfile.parse("msgpipe") == .msgpipe)
        #expect(try GATTServiceProfile.parse("nus") == .nordicUART)
    }

    @Test(arguments: [
        ("hid", GATTProfileError.unknownName("hid")),
        ("", .unknownName("")),
        ("custom", .customFieldCount(0)),
        ("custom:FFF0:FFF2", .customFieldCount(2)),
        ("custom:FFF0:FFF2:FFF1:FFF3", .customFieldCount(4)),
        ("custom:FFF:FFF2:FFF1", .invalidUUID(role: "SERVICE", "FFF")),
        ("custom:FFF0:GGGG:FFF1", .invalidUUID(role: "WRITE", "GGGG")),
        ("custom:FFF0:FFF2:", .invalidUUID(role: "NOTIFY", "")),
        ("custom:FFF0:FFF2:68753A444D6F12269C600050E4C11111", .invalidUUID(role: "NOTIFY", "68753A444D6F12269C600050E4C11111")),
        ("custom:FFF0:FFF2:68753A44-4D6F-1226-9C60-0050E4C1111", .invalidUUID(role: "NOTIFY", "68753A44-4D6F-1226-9C60-0050E4C1111")),
        ("custom:FFF0:FFF2:FFF2", .repeatedUUID),
        ("custom:FFF0:FFF2:0000FFF0-0000-1000-8000-00805F9B34FB", .repeatedUUID),
    ])
    func badInputIsATypedError(text: String, error: GATTProfileError) {
        #expect(throws: error) { try GATTServiceProfile.parse(text) }
        #expect(!error.description.isEmpty)
    }

    /// Serves the profile's database and discovers it with the GATT client over the in-memory bearer pair.
    private func discover(_ profile: GATTServiceProfile) async throws -> (
        services: [GATTRemoteService], characteristics: [GATTRemoteCharacteristic], descriptors: [[GATTRemoteDescriptor]]
    ) {
        let server = GATTServer(database: profile.makeDatabase(info: GATTLinkPairInfo.info))
        let pair = try ClientServerPair(server: server)
        let services = try await pair.client.discoverPrimaryServices()
        let service = try await pair.client.discoverPrimaryService(profile.service)
        let characteristics = try await pair.client.discoverCharacteristics(of: service)
        var descriptors: [[GATTRemoteDescriptor]] = []
        for characteristic in characteristics { descriptors.append(try await pair.client.discoverDescriptors(of: characteristic)) }
        await pair.close()
        return (services, characteristics, descriptors)
    }

    @Test func sixteenBitDatabaseHasTheSeedsLayout() async throws {
        let profile = try GATTServiceProfile.parse(Self.fff0)
        let found = try await discover(profile)
        #expect(found.services == [GATTRemoteService(uuid: .bit16(0xFFF0), handles: .init(start: 1, end: 8))])
        #expect(found.characteristics.map(\.uuid) == [.bit16(0xFFF2), .bit16(0xFFF1)], "no info characteristic")
        #expect(found.characteristics.map(\.declarationHandle) == [2, 5])
        #expect(found.characteristics.map(\.valueHandle) == [3, 6])
        #expect(found.characteristics.map(\.properties) == [[.write, .writeWithoutResponse], [.notify]])
        #expect(found.descriptors == [
            [GATTRemoteDescriptor(handle: 4, uuid: .characteristicUserDescription)],
            [GATTRemoteDescriptor(handle: 7, uuid: .clientCharacteristicConfiguration),
             GATTRemoteDescriptor(handle: 8, uuid: .characteristicUserDescription)],
        ])
        // The declarations' bytes: properties, value handle, UUID (2 bytes on the wire for 16-bit UUIDs).
        let attributes = profile.makeDatabase(info: GATTLinkPairInfo.info).attributes
        #expect(attributes.map(\.handle) == Array(1...8))
        #expect(attributes[0].value == bytes("f0 ff"))
        #expect(attributes[1].value == bytes("0c 03 00 f2 ff"))
        #expect(attributes[4].value == bytes("10 06 00 f1 ff"))
        #expect(attributes[6].value == bytes("00 00"))
    }

    @Test func oneHundredTwentyEightBitDatabaseHasTheQXLayout() async throws {
        let profile = try GATTServiceProfile.parse(Self.qx)
        let found = try await discover(profile)
        #expect(found.services.map(\.uuid) == [profile.service])
        #expect(found.services.map(\.handles) == [.init(start: 1, end: 8)])
        #expect(found.characteristics.map(\.uuid) == [profile.rx, profile.tx])
        #expect(found.characteristics.map(\.valueHandle) == [3, 6])
        #expect(found.characteristics.map(\.properties) == [[.write, .writeWithoutResponse], [.notify]])
        let attributes = profile.makeDatabase(info: GATTLinkPairInfo.info).attributes
        #expect(attributes[0].value == bytes("00 00 c0 e4 50 00 60 9c 26 12 6f 4d 44 3a 75 68"))
        #expect(attributes[1].value == bytes("0c 03 00 22 22 c2 e4 50 00 60 9c 26 12 6f 4d 44 3a 75 68"))
        #expect(attributes[4].value == bytes("10 06 00 11 11 c1 e4 50 00 60 9c 26 12 6f 4d 44 3a 75 68"))
    }

    @Test(arguments: [fff0, qx])
    func linksCarryPacketsBothWaysOverACustomProfile(_ text: String) async throws {
        let pair = try await LinkPair(profile: try GATTServiceProfile.parse(text))
        #expect(await pair.central.events.next() == .connected(maximumPacketSize: 244))
        #expect(await pair.peripheral.events.next() == .connected(maximumPacketSize: 244))
        #expect(pair.central.peerInfo == nil, "no info characteristic to read")
        #expect(!pair.peripheral.canConfirm, "a notify-only TX cannot confirm")
        try await pair.central.send([1, 2, 3])
        try await pair.peripheral.send([4, 5])
        #expect(await pair.peripheral.events.next() == .packet([1, 2, 3]))
        #expect(await pair.central.events.next() == .packet([4, 5]))
        await pair.close()
    }

    @Test func theMsgPipeProfileCentralEnablesIndicationsSoThePeripheralCanConfirm() async throws {
        let pair = try await LinkPair()
        _ = await pair.central.events.next()
        _ = await pair.peripheral.events.next()
        #expect(pair.peripheral.canConfirm)
        try await pair.peripheral.send([9])  // still a notification: the data path is not slowed
        try await pair.peripheral.sendConfirmed([10])
        #expect(await pair.central.events.next() == .packet([9]))
        #expect(await pair.central.events.next() == .packet([10]))
        await pair.close()
    }
}

private enum GATTLinkPairInfo {
    static let info = LinkPair.info
}
