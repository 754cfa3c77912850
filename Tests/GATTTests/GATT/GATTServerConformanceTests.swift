@testable import GATT
import Testing
import TestSupport

/// Bluetooth Core Vol 3 Part F/G rules the basic server tests leave out: opcode classes, MTU clamping, the
/// 512-byte attribute limit, per-connection CCCDs in discovery, and the handle an Error Response names.
@Suite struct GATTServerConformanceTests {
    /// What the server must do with a PDU that is just `opcode` (every request needs parameters).
    private static func expectedAnswer(toBare opcode: UInt8) -> [UInt8]? {
        guard GATTServerHostileTests.isAnswered(opcode) else { return nil }
        let requests = Set(GATTServerHostileTests.requests.map { bytes($0)[0] })
        let code: UInt8 = requests.contains(opcode) ? 0x04 : 0x06  // Invalid PDU : Request Not Supported
        return [0x01, opcode, 0x00, 0x00, code]
    }

    @Test func everyOpcodeIsAnsweredIgnoredOrRefusedByItsClass() {
        for opcode in UInt8.min...UInt8.max {
            var server = TestDatabase.server()
            #expect(server.exchange(hex(opcode)).response == Self.expectedAnswer(toBare: opcode), "opcode 0x\(hex(opcode))")
            #expect(server.exchange("0a 03 00").response == [0x0B] + Array("battery".utf8), "up after 0x\(hex(opcode))")
        }
    }

    @Test(arguments: [(0, 23), (22, 23), (23, 23), (100, 100), (517, 517), (518, 517), (65535, 517)])
    func mtuExchangeClampsTheClientMTUTo23Through517(clientMTU: Int, effective: Int) {
        var server = TestDatabase.server()
        let request: [UInt8] = [0x02, UInt8(clientMTU & 0xFF), UInt8(clientMTU >> 8)]
        let reaction = server.receive(request[...], now: .zero)
        #expect(reaction.response == bytes("03 05 02"), "the server always offers its own receive MTU")
        #expect(reaction.event == .mtuExchanged(effective))
        #expect(server.mtu == effective)
    }

    @Test(arguments: [(23, 20), (247, 244), (515, 512), (517, 512)])
    func pushesCarryAtMostMTUMinusThreeAndNeverMoreThan512(mtu: Int, limit: Int) throws {
        var server = TestDatabase.server()
        _ = server.receive([0x02, UInt8(mtu & 0xFF), UInt8(mtu >> 8)][...], now: .zero)
        server.responseSent()
        _ = server.exchange("12 0a 00 03 00")
        #expect(server.maximumPushLength == limit)
        var out: [UInt8] = []
        try server.notification(valueHandle: 9, value: Array(repeating: 1, count: limit)[...], into: &out)
        #expect(out.count == limit + 3)
        #expect(throws: ATTError.valueTooLong(length: limit + 1, limit: limit)) {
            try server.notification(valueHandle: 9, value: Array(repeating: 1, count: limit + 1)[...], into: &out)
        }
        #expect(throws: ATTError.valueTooLong(length: limit + 1, limit: limit)) {
            try server.indication(valueHandle: 9, value: Array(repeating: 1, count: limit + 1)[...], now: .zero, into: &out)
        }
        #expect(!server.isIndicationOutstanding, "a refused indication arms nothing")
    }

    @Test func writingZeroToTheCCCDUnsubscribes() {
        var server = TestDatabase.server()
        _ = server.exchange("12 0a 00 03 00")
        #expect(server.subscription(valueHandle: 9) == [.notifications, .indications])
        #expect(server.exchange("12 0a 00 00 00").event == .subscriptionChanged(valueHandle: 9, []))
        var out: [UInt8] = []
        #expect(throws: ATTError.notSubscribed(handle: 9)) { try server.notification(valueHandle: 9, value: [1][...], into: &out) }
    }

    @Test func readByTypeOfCCCDsShowsThisConnectionsSubscriptions() {
        var server = TestDatabase.server()
        #expect(server.exchange("08 01 00 ff ff 02 29").response == bytes("09 04 04 00 00 00 0a 00 00 00"))
        _ = server.exchange("12 0a 00 01 00")
        #expect(server.exchange("08 01 00 ff ff 02 29").response == bytes("09 04 04 00 00 00 0a 00 01 00"))
    }

    @Test func readByTypeNamesTheFirstUnreadableAttribute() {
        var server = TestDatabase.server()
        let rxUUID = "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 02 00 40 6e"
        #expect(server.exchange("08 05 00 0d 00 " + rxUUID).response == bytes("01 08 07 00 02"))
        #expect(server.exchange("08 05 00 0d 00 34 12").response == bytes("01 08 05 00 0a"), "not found names the start")
    }

    @Test func findByTypeValueOfANonGroupingTypeEndsAtTheFoundHandle() {
        var server = TestDatabase.server()
        #expect(server.exchange("06 01 00 ff ff 02 29 00 00").response == bytes("07 04 00 04 00 0a 00 0a 00"))
    }

    @Test func readMultipleNeedsTwoHandlesAndNamesTheFirstBadOne() {
        var server = TestDatabase.server()
        #expect(server.exchange("0e 03 00").response == bytes("01 0e 00 00 04"))
        #expect(server.exchange("0e 03 00 99 00 07 00").response == bytes("01 0e 99 00 01"))
        #expect(server.exchange("0e 03 00 04").response == bytes("01 0e 00 00 04"), "an odd length is malformed")
    }

    @Test func executeWriteIsAllOrNothing() {
        var server = TestDatabase.server()
        _ = server.exchange("16 0a 00 00 00 01 00")  // TX's CCCD: notifications, fine
        _ = server.exchange("16 04 00 00 00 02 00")  // the battery's CCCD: indications it does not support
        #expect(server.exchange("18 01") == (bytes("01 18 04 00 fd"), nil))
        #expect(server.exchange("0a 0a 00").response == bytes("0b 00 00"), "the valid part was not applied either")
        #expect(server.subscription(valueHandle: 9) == [])
    }

    @Test func malformedConfirmationConfirmsNothing() throws {
        var server = TestDatabase.server()
        _ = server.exchange("12 0a 00 02 00")
        var out: [UInt8] = []
        try server.indication(valueHandle: 9, value: [1][...], now: .zero, into: &out)
        #expect(server.exchange("1e 00") == (nil, nil))
        #expect(server.isIndicationOutstanding)
        #expect(server.exchange("1e").event == .indicationConfirmed(valueHandle: 9))
    }

    @Test func withdrawnIndicationFreesTheSlotAndDisarmsTheTimer() throws {
        var server = TestDatabase.server()
        _ = server.exchange("12 0a 00 02 00")
        var out: [UInt8] = []
        try server.indication(valueHandle: 9, value: [1][...], now: .zero, into: &out)
        server.withdrawIndication()
        #expect(server.nextTimeout == nil)
        #expect(server.handleTimeout(now: .seconds(60)) == nil)
        try server.indication(valueHandle: 9, value: [2][...], now: .seconds(60), into: &out)
    }

    // MARK: The 512-byte attribute limit

    /// One service with one read/write characteristic of the full 512 bytes.
    static var longValueServer: GATTServer {
        GATTServer(database: GATTDatabase(services: [
            GATTService(uuid: .bit16(0x1800), characteristics: [
                GATTCharacteristic(uuid: .bit16(0x2A00), properties: [.read, .write], permissions: [.read, .write]),
            ]),
        ]))
    }

    @Test func preparedWritesFillAnAttributeTo512BytesAndNotOneMore() {
        for (length, expected) in [(512, bytes("19")), (513, bytes("01 18 03 00 0d"))] {
            var server = Self.longValueServer
            let value = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            for offset in stride(from: 0, to: length, by: 18) {
                let request = ATTPrepareWriteRequest(
                    handle: 3, offset: UInt16(offset), value: Array(value[offset..<min(length, offset + 18)])).bytes
                #expect(server.receive(request[...], now: .zero).response?.first == ATTOpcode.prepareWriteResponse)
                server.responseSent()
            }
            #expect(server.exchange("18 01").response == expected, "\(length) bytes")
            if length == 512 { #expect(server.database[3]?.value == value) }
        }
    }

    @Test func writeRequestOf513BytesIsInvalidAttributeValueLengthAtTheLargestMTU() {
        var server = Self.longValueServer
        _ = server.exchange("02 05 02")
        let request = ATTWriteRequest(handle: 3, value: Array(repeating: 7, count: 513)).bytes
        #expect(server.receive(request[...], now: .zero).response == bytes("01 12 03 00 0d"))
        server.responseSent()
        let fits = ATTWriteRequest(handle: 3, value: Array(repeating: 7, count: 512)).bytes
        #expect(server.receive(fits[...], now: .zero).response == bytes("13"))
    }
}
