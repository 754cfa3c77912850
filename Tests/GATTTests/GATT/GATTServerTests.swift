@testable import GATT
import MemoryLinks
import Testing
import TestSupport

@Suite struct GATTServerTests {
    // MARK: MTU

    @Test func mtuExchangeSettlesOnTheSmallerMTU() {
        var server = TestDatabase.server(maximumMTU: 185)
        let (response, event) = server.exchange("02 f7 00")
        #expect(response == bytes("03 b9 00"))
        #expect(event == .mtuExchanged(185))
        #expect(server.mtu == 185)
    }

    @Test func clientMTUBelowTheMinimumCountsAs23() {
        var server = TestDatabase.server()
        #expect(server.exchange("02 05 00").event == .mtuExchanged(23))
    }

    @Test func secondMTUExchangeIsAnsweredButChangesNothing() {
        var server = TestDatabase.server()
        _ = server.exchange("02 f7 00")
        let (response, event) = server.exchange("02 40 00")
        #expect(response == bytes("03 05 02"))
        #expect(event == nil)
        #expect(server.mtu == 247)
    }

    // MARK: Discovery

    @Test func readByGroupTypeListsPrimaryServicesOfOneUUIDLength() {
        var server = TestDatabase.server()
        #expect(server.exchange("10 01 00 ff ff 00 28").response == bytes("11 06 01 00 04 00 0f 18"))
        #expect(server.exchange("10 05 00 ff ff 00 28").response == bytes("11 14 05 00 0d 00 " + service128Bytes))
        #expect(server.exchange("10 0e 00 ff ff 00 28").response == bytes("01 10 0e 00 0a"))
    }

    @Test func readByGroupTypeOfANonGroupingTypeIsUnsupportedGroupType() {
        var server = TestDatabase.server()
        #expect(server.exchange("10 01 00 ff ff 03 28").response == bytes("01 10 01 00 10"))
    }

    @Test func findByTypeValueFindsAServiceByUUID() {
        var server = TestDatabase.server()
        #expect(server.exchange("06 01 00 ff ff 00 28 " + service128Bytes).response == bytes("07 05 00 0d 00"))
        #expect(server.exchange("06 01 00 ff ff 00 28 0a 18").response == bytes("01 06 01 00 0a"))
    }

    @Test func readByTypeListsCharacteristicDeclarations() {
        var server = TestDatabase.server()
        #expect(server.exchange("08 01 00 04 00 03 28").response == bytes("09 07 02 00 12 03 00 19 2a"))
        // 128-bit declarations are 19 bytes: one per response at MTU 23.
        let response = server.exchange("08 05 00 0d 00 03 28").response ?? []
        #expect(response.prefix(7) == bytes("09 15 06 00 0c 07 00")[...])
        #expect(response.count == 23)
    }

    @Test func findInformationListsDescriptorsWithOneFormat() {
        var server = TestDatabase.server()
        #expect(server.exchange("04 04 00 04 00").response == bytes("05 01 04 00 02 29"))
        #expect(server.exchange("04 0d 00 ff ff").response == bytes("05 01 0d 00 01 29"))
        #expect(server.exchange("04 0e 00 ff ff").response == bytes("01 04 0e 00 0a"))
        let response = server.exchange("04 07 00 0a 00").response ?? []
        #expect(response == bytes("05 02 07 00 " + "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 02 00 40 6e"))
    }

    @Test(arguments: ["04 00 00 05 00", "04 05 00 04 00", "08 00 00 ff ff 03 28", "10 09 00 01 00 00 28",
                      "06 00 00 ff ff 00 28 0f 18"])
    func invalidHandleRangeIsInvalidHandle(_ request: String) {
        var server = TestDatabase.server()
        let pdu = bytes(request)
        #expect(server.exchange(request).response == [0x01, pdu[0], pdu[1], pdu[2], 0x01])
    }

    // MARK: Reads

    @Test func readReturnsTheValue() {
        var server = TestDatabase.server()
        #expect(server.exchange("0a 03 00").response == [0x0B] + Array("battery".utf8))
    }

    @Test func readOfALongValueIsCutAtMTUMinusOneAndReadBlobReturnsTheRest() {
        var server = TestDatabase.server()
        #expect(server.exchange("0a 0c 00").response == [0x0B] + TestDatabase.infoValue[0..<22])
        #expect(server.exchange("0c 0c 00 16 00").response == [0x0D] + TestDatabase.infoValue[22..<44])
        #expect(server.exchange("0c 0c 00 2c 00").response == [0x0D] + TestDatabase.infoValue[44..<60])
        #expect(server.exchange("0c 0c 00 3c 00").response == [0x0D])
    }

    @Test func readErrors() {
        var server = TestDatabase.server()
        #expect(server.exchange("0a 00 00").response == bytes("01 0a 00 00 01"), "handle 0 is invalid")
        #expect(server.exchange("0a 99 00").response == bytes("01 0a 99 00 01"), "past the table is invalid")
        #expect(server.exchange("0a 07 00").response == bytes("01 0a 07 00 02"), "RX is write-only")
        #expect(server.exchange("0a 03").response == bytes("01 0a 00 00 04"), "truncated is an invalid PDU")
        #expect(server.exchange("0c 0c 00 3d 00").response == bytes("01 0c 0c 00 07"), "offset past the end")
        #expect(server.exchange("0c 04 00 00 00").response == bytes("01 0c 04 00 0b"), "CCCD is not long")
        #expect(server.exchange("0c 07 00 00 00").response == bytes("01 0c 07 00 02"))
    }

    @Test func readMultipleConcatenatesValues() {
        var server = TestDatabase.server()
        #expect(server.exchange("0e 03 00 04 00").response == [0x0F] + Array("battery".utf8) + [0, 0])
        #expect(server.exchange("0e 03 00 07 00").response == bytes("01 0e 07 00 02"))
    }

    // MARK: Writes

    @Test func writeRequestIsAnsweredAndReported() {
        var server = TestDatabase.server()
        let (response, event) = server.exchange("12 07 00 68 69")
        #expect(response == bytes("13"))
        #expect(event == .write(handle: 7, value: Array("hi".utf8), withResponse: true))
    }

    @Test func writeCommandIsReportedAndNeverAnswered() {
        var server = TestDatabase.server()
        let (response, event) = server.exchange("52 07 00 68 69")
        #expect(response == nil)
        #expect(event == .write(handle: 7, value: Array("hi".utf8), withResponse: false))
    }

    @Test func failingWriteCommandIsSilentlyIgnored() {
        var server = TestDatabase.server()
        for command in ["52 03 00 01", "52 99 00 01", "52 07", "d2 07 00 01 02"] {
            let (response, event) = server.exchange(command)
            #expect(response == nil && event == nil, "\(command)")
        }
    }

    @Test func writeErrors() {
        var server = TestDatabase.server()
        #expect(server.exchange("12 03 00 01").response == bytes("01 12 03 00 03"), "read-only")
        #expect(server.exchange("12 00 00 01").response == bytes("01 12 00 00 01"), "handle 0")
        #expect(server.exchange("12 07").response == bytes("01 12 00 00 04"), "truncated")
        #expect(server.exchange("12 04 00 01").response == bytes("01 12 04 00 0d"), "CCCD takes 2 bytes")
        #expect(server.exchange("12 04 00 02 00").response == bytes("01 12 04 00 fd"), "battery cannot indicate")
        _ = server.exchange("02 f7 00")
        let tooLong = "12 07 00 " + String(repeating: "aa ", count: 65)
        #expect(server.exchange(tooLong).response == bytes("01 12 07 00 0d"), "RX takes at most 64 bytes")
    }

    @Test func refusedWriteLeavesTheUserDescriptionUnchanged() {
        var server = TestDatabase.server()
        #expect(server.exchange("12 0d 00 01").response == bytes("01 12 0d 00 03"))
        #expect(server.exchange("0a 0d 00").response == bytes("0b 69 6e 66 6f"))
    }

    // MARK: Subscriptions

    @Test func cccdIsPerConnectionAndEnablesNotifications() throws {
        var server = TestDatabase.server()
        var out: [UInt8] = []
        #expect(throws: ATTError.notSubscribed(handle: 9)) {
            try server.notification(valueHandle: 9, value: [1][...], into: &out)
        }
        let (response, event) = server.exchange("12 0a 00 01 00")
        #expect(response == bytes("13"))
        #expect(event == .subscriptionChanged(valueHandle: 9, .notifications))
        #expect(server.exchange("0a 0a 00").response == bytes("0b 01 00"))
        try server.notification(valueHandle: 9, value: [1, 2][...], into: &out)
        #expect(out == bytes("1b 09 00 01 02"))
        var fresh = TestDatabase.server()
        #expect(fresh.exchange("0a 0a 00").response == bytes("0b 00 00"))
    }

    @Test func notificationLongerThanMTUMinusThreeIsRefused() throws {
        var server = TestDatabase.server()
        _ = server.exchange("12 0a 00 01 00")
        var out: [UInt8] = []
        #expect(throws: ATTError.valueTooLong(length: 21, limit: 20)) {
            try server.notification(valueHandle: 9, value: Array(repeating: 0, count: 21)[...], into: &out)
        }
        #expect(throws: ATTError.invalidHandle(7)) { try server.notification(valueHandle: 7, value: [][...], into: &out) }
    }

    @Test func oneIndicationAtATimeUntilConfirmed() throws {
        var server = TestDatabase.server()
        _ = server.exchange("12 0a 00 02 00")
        var out: [UInt8] = []
        try server.indication(valueHandle: 9, value: [7][...], now: .seconds(1), into: &out)
        #expect(out == bytes("1d 09 00 07"))
        #expect(throws: ATTError.indicationPending) {
            try server.indication(valueHandle: 9, value: [8][...], now: .seconds(2), into: &out)
        }
        #expect(server.nextTimeout == .seconds(31))
        let (response, event) = server.exchange("1e")
        #expect(response == nil)
        #expect(event == .indicationConfirmed(valueHandle: 9))
        #expect(server.nextTimeout == nil)
        try server.indication(valueHandle: 9, value: [8][...], now: .seconds(3), into: &out)
    }

    @Test func unconfirmedIndicationTimesOutAfterThirtySecondsAndTheServerFallsSilent() throws {
        var server = TestDatabase.server()
        _ = server.exchange("12 0a 00 02 00")
        var out: [UInt8] = []
        try server.indication(valueHandle: 9, value: [7][...], now: .seconds(10), into: &out)
        #expect(server.handleTimeout(now: .seconds(39)) == nil)
        #expect(server.handleTimeout(now: .seconds(40)) == .transactionTimedOut(valueHandle: 9))
        #expect(server.isFailed)
        #expect(server.exchange("0a 03 00").response == nil)
    }

    @Test func unsolicitedConfirmationIsIgnored() {
        var server = TestDatabase.server()
        #expect(server.exchange("1e").event == nil)
        #expect(server.exchange("0a 03 00").response?.first == 0x0B)
    }

    // MARK: Prepared writes

    @Test func preparedWritesAssembleALongValueOnExecute() {
        var server = TestDatabase.server()
        #expect(server.exchange("16 07 00 00 00 61 62").response == bytes("17 07 00 00 00 61 62"))
        #expect(server.exchange("16 07 00 02 00 63").response == bytes("17 07 00 02 00 63"))
        let (response, event) = server.exchange("18 01")
        #expect(response == bytes("19"))
        #expect(event == .preparedWritesExecuted([GATTWrite(handle: 7, value: Array("abc".utf8))]))
    }

    @Test func executeWithCancelDiscardsTheQueue() {
        var server = TestDatabase.server()
        _ = server.exchange("16 07 00 00 00 61")
        #expect(server.exchange("18 00") == (bytes("19"), nil))
        #expect(server.exchange("18 01") == (bytes("19"), nil))
    }

    @Test func prepareQueueOverflowIsPrepareQueueFull() {
        var server = TestDatabase.server(prepareQueueLimit: 2)
        _ = server.exchange("16 07 00 00 00 61")
        _ = server.exchange("16 07 00 01 00 62")
        #expect(server.exchange("16 07 00 02 00 63").response == bytes("01 16 07 00 09"))
    }

    @Test func preparedWriteErrors() {
        var server = TestDatabase.server()
        #expect(server.exchange("16 03 00 00 00 61").response == bytes("01 16 03 00 03"), "read-only")
        #expect(server.exchange("16 99 00 00 00 61").response == bytes("01 16 99 00 01"))
        _ = server.exchange("16 07 00 05 00 61")
        #expect(server.exchange("18 01").response == bytes("01 18 07 00 07"), "offset past the value is checked on execute")
        #expect(server.exchange("18 02").response == bytes("01 18 00 00 04"), "unknown flags")
        _ = server.exchange("16 07 00 00 00 " + String(repeating: "aa ", count: 18))
        _ = server.exchange("16 07 00 12 00 " + String(repeating: "aa ", count: 18))
        _ = server.exchange("16 07 00 24 00 " + String(repeating: "aa ", count: 18))
        _ = server.exchange("16 07 00 36 00 " + String(repeating: "aa ", count: 18))
        #expect(server.exchange("18 01").response == bytes("01 18 07 00 0d"), "72 bytes exceed RX's 64")
    }

    // MARK: Hostile input

    @Test func unknownRequestIsRequestNotSupportedAndUnknownCommandIsIgnored() {
        var server = TestDatabase.server()
        #expect(server.exchange("20 01 00").response == bytes("01 20 00 00 06"))
        #expect(server.exchange("14").response == bytes("01 14 00 00 06"))
        #expect(server.exchange("7f 01 02").response == nil)
        #expect(server.exchange("0b 01 02").response == nil, "an unsolicited response is ignored")
        #expect(server.exchange("").response == nil)
    }

    @Test func secondRequestBeforeTheResponseWasSentIsAProtocolViolation() {
        var server = TestDatabase.server()
        #expect(server.receive(bytes("0a 03 00")[...], now: .zero).response != nil)
        let reaction = server.receive(bytes("0a 03 00")[...], now: .zero)
        #expect(reaction.response == nil)
        guard case .protocolViolation = reaction.event else {
            Issue.record("expected a protocol violation, got \(String(describing: reaction.event))")
            return
        }
        #expect(server.isFailed)
    }

    @Test func requestLongerThanTheMTUIsAnInvalidPDU() {
        var server = TestDatabase.server()
        let request = "12 07 00 " + String(repeating: "aa ", count: 21)
        #expect(server.exchange(request).response == bytes("01 12 00 00 04"))
    }

    @Test func randomGarbageNeverStopsTheServerAnswering() {
        var server = TestDatabase.server()
        var generator = SplitMix64(seed: 0xA77)
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 40)
            let pdu = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let reaction = server.receive(pdu[...], now: .zero)
            if let response = reaction.response {
                #expect(response.count <= server.mtu)
                server.responseSent()
            }
            if server.isFailed { server = TestDatabase.server() }
        }
        #expect(server.exchange("0a 03 00").response == [0x0B] + Array("battery".utf8))
    }
}
