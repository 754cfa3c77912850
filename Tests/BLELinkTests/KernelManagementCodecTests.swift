import MemoryLinks
import Testing
@testable import BLELink

/// Byte vectors for the management interface's commands and events (BlueZ doc/mgmt-api.txt).
struct KernelManagementCodecTests {
    static let addressA = BluetoothAddress("00:AA:01:00:00:00")!

    @Test(arguments: [
        (ManagementCommand.readControllerIndexList, [0x03, 0x00, 0xFF, 0xFF, 0x00, 0x00] as [UInt8]),
        (.readControllerInfo(1), [0x04, 0x00, 0x01, 0x00, 0x00, 0x00]),
        (.setPowered(0, true), [0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]),
        (.setConnectable(2, false), [0x07, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00]),
        (.setLowEnergy(0, true), [0x0D, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]),
        (.getConnections(0), [0x15, 0x00, 0x00, 0x00, 0x00, 0x00]),
        (.startDiscovery(1), [0x23, 0x00, 0x01, 0x00, 0x01, 0x00, 0x06]),
        (.stopDiscovery(1), [0x24, 0x00, 0x01, 0x00, 0x01, 0x00, 0x06]),
        (.setAdvertising(0, 0), [0x29, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]),
        (.removeAdvertising(0, instance: 1), [0x3F, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]),
    ])
    func commandEncodesToSpecBytes(command: ManagementCommand, bytes: [UInt8]) {
        #expect(command.encoded() == bytes)
    }

    @Test func addAdvertisingCarriesFlagsLengthsDataAndScanResponse() {
        let command = ManagementCommand.addAdvertising(
            0, instance: 1, flags: [.connectable, .discoverable], advertisingData: [0x03, 0x03, 0x0D, 0x18],
            scanResponse: [0x02, 0x09, 0x41])
        #expect(command.encoded() == [
            0x3E, 0x00, 0x00, 0x00, 0x12, 0x00,  // opcode, index 0, 18 parameter bytes
            0x01, 0x03, 0x00, 0x00, 0x00,  // instance 1, flags connectable|discoverable
            0x00, 0x00, 0x00, 0x00,  // duration, timeout
            0x04, 0x03,  // data lengths
            0x03, 0x03, 0x0D, 0x18, 0x02, 0x09, 0x41,
        ])
    }

    @Test func advertisementPutsServiceInDataAndNameInScanResponse() throws {
        let service = try #require(AdvertisedServiceUUID("12345678-1234-5678-1234-56789abcdef0"))
        let command = try Advertisement(localName: "msgpipe", service: service).command(adapterIndex: 0)
        let parameters = command.parameters
        #expect(parameters[9] == 18 && parameters[10] == 9)
        #expect(Array(parameters[11..<13]) == [17, 0x07])
        #expect(Array(parameters[13..<29]) == service.littleEndianBytes)
        #expect(Array(parameters[29...]) == [8, 0x09] + Array("msgpipe".utf8))
    }

    @Test func setLocalNamePadsNameAndShortName() {
        let command = ManagementCommand.setLocalName(0, name: "lab", shortName: "l")
        #expect(command.parameters.count == 260)
        #expect(Array(command.parameters[0..<4]) == [0x6C, 0x61, 0x62, 0x00])
        #expect(Array(command.parameters[249..<251]) == [0x6C, 0x00])
    }

    @Test func commandCompleteDecodesOpcodeStatusAndReturnParameters() throws {
        let event = try ManagementEvent(decoding: [0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x05, 0x00, 0x00, 0x07][...])
        #expect(event == ManagementEvent(
            controllerIndex: 0, kind: .commandComplete(opcode: 0x0005, status: .success, returnParameters: [0x07])))
    }

    @Test func commandStatusDecodesFailure() throws {
        let event = try ManagementEvent(decoding: [0x02, 0x00, 0x01, 0x00, 0x03, 0x00, 0x23, 0x00, 0x0F][...])
        #expect(event.kind == .commandStatus(opcode: 0x0023, status: .notPowered))
        #expect(event.controllerIndex == 1)
    }

    @Test func deviceFoundDecodesAddressTypeRSSIAndEIR() throws {
        let eir: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x09, 0x6C, 0x61, 0x62, 0x03, 0x03, 0x0D, 0x18]
        let packet: [UInt8] = [0x12, 0x00, 0x01, 0x00, UInt8(14 + eir.count), 0x00,
                               0x00, 0x00, 0x00, 0x01, 0xAA, 0x00,  // 00:AA:01:00:00:00
                               0x01, 0xC4,  // LE public, -60 dBm
                               0x00, 0x00, 0x00, 0x00, UInt8(eir.count), 0x00] + eir
        let event = try ManagementEvent(decoding: packet[...])
        guard case let .deviceFound(found) = event.kind else {
            Issue.record("expected Device Found, got \(event.kind)")
            return
        }
        #expect(found.peer == BluetoothPeer(address: Self.addressA, type: .lePublic))
        #expect(found.rssi == -60)
        #expect(found.encodedEvent(controllerIndex: 1) == packet)
        let peer = DiscoveredPeer(found)
        #expect(peer.name == "lab")
        #expect(peer.services == [AdvertisedServiceUUID(uuid16: 0x180D)])
    }

    @Test func deviceDisconnectedDecodesPeerAndReason() throws {
        let event = try ManagementEvent(decoding: [0x0C, 0x00, 0x00, 0x00, 0x08, 0x00,
                                                   0x01, 0x00, 0x01, 0x01, 0xAA, 0x00, 0x01, 0x03][...])
        #expect(event.kind == .deviceDisconnected(
            BluetoothPeer(address: BluetoothAddress("00:AA:01:01:00:01")!, type: .lePublic), reason: 3))
    }

    @Test func discoveringAndNewSettingsDecode() throws {
        #expect(try ManagementEvent(decoding: [0x13, 0x00, 0x01, 0x00, 0x02, 0x00, 0x06, 0x00][...]).kind
            == .discovering(addressTypes: 6, active: false))
        #expect(try ManagementEvent(decoding: [0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00][...]).kind
            == .newSettings([.powered, .lowEnergy]))
    }

    @Test func eventWithWrongDeclaredLengthIsRejected() {
        #expect(throws: BluetoothError.self) {
            try ManagementEvent(decoding: [0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x05, 0x00, 0x00][...])
        }
    }

    @Test func deviceFoundWithEIRLengthPastTheEndIsRejected() {
        let packet: [UInt8] = [0x12, 0x00, 0x00, 0x00, 0x0F, 0x00, 0, 0, 0, 1, 0xAA, 0, 0x01, 0xC4, 0, 0, 0, 0, 0x05, 0x00, 0x02]
        #expect(throws: BluetoothError.self) { try ManagementEvent(decoding: packet[...]) }
    }

    @Test func everyTruncationOfAnEventThrowsInsteadOfTrapping() {
        let packet: [UInt8] = [0x0C, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0xAA, 0x00, 0x01, 0x03]
        for end in 0..<packet.count {
            var truncated = Array(packet[..<end])
            if truncated.count >= 6 { truncated[4] = UInt8(end - 6) }  // consistent header, short body
            #expect(throws: BluetoothError.self) { try ManagementEvent(decoding: truncated[...]) }
        }
    }

    @Test func controllerInfoDecodesAddressSettingsAndName() throws {
        var parameters: [UInt8] = [0x00, 0x00, 0x00, 0x01, 0xAA, 0x00, 0x09, 0x3F, 0x00]
        parameters.appendManagementField(UInt32(0x0000_0FFF))
        parameters.appendManagementField(UInt32(0x0000_0601))  // powered, LE, advertising
        parameters += [0, 0, 0] + Array("A".utf8) + [UInt8](repeating: 0, count: 248) + [UInt8](repeating: 0, count: 11)
        let info = try ControllerInfo(decoding: parameters[...])
        #expect(info.address == Self.addressA)
        #expect(info.currentSettings == [.powered, .lowEnergy, .advertising])
        #expect(info.isReadyForLowEnergy)
        #expect(info.name == "A")
        #expect(throws: BluetoothError.self) { try ControllerInfo(decoding: parameters.dropLast()) }
    }

    @Test func indexAndConnectionListsDecodeAndRejectBadCounts() throws {
        #expect(try decodeControllerIndexList([0x02, 0x00, 0x00, 0x00, 0x01, 0x00][...]) == [0, 1])
        #expect(throws: BluetoothError.self) { try decodeControllerIndexList([0x03, 0x00, 0x00, 0x00][...]) }
        #expect(try decodeConnectionList([0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0xAA, 0x00, 0x01][...])
            == [BluetoothPeer(address: Self.addressA, type: .lePublic)])
        #expect(throws: BluetoothError.self) { try decodeConnectionList([0x01, 0x00, 0x00][...]) }
    }

    @Test(arguments: [(ManagementStatus.permissionDenied, "permission denied"), (.notPowered, "powered off"),
                      (.invalidIndex, "no Bluetooth adapter"), (.busy, "Busy (0x0a)")])
    func failedCommandStatusMapsToAnActionableError(status: ManagementStatus, phrase: String) {
        let error = ManagementSocket.error(for: .startDiscovery(0), status: status)
        #expect(error.description.contains(phrase))
    }

    @Test func randomBytesNeverTrapTheEventDecoder() {
        var random = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<5000 {
            let count = Int(random.next() % 40)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if bytes.count >= 6 {
                bytes[0] = [0x01, 0x02, 0x06, 0x0B, 0x0C, 0x12, 0x13][Int(random.next() % 7)]
                bytes[1] = 0
                bytes[4] = UInt8(bytes.count - 6)
                bytes[5] = 0
            }
            _ = try? ManagementEvent(decoding: bytes[...])
        }
    }
}
