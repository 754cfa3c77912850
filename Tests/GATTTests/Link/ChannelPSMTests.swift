@testable import GATT
import Testing
import Transport
import TestSupport

/// The channel PSM a peripheral publishes (PROTOCOL.md 5.9): the info characteristic's layout 2 and Apple's
/// PSM characteristic, and the central reading them.
@Suite struct ChannelPSMTests {
    @Test func infoWithAChannelHasLayoutTwoAndThePSMLittleEndian() throws {
        let info = MsgPipeServiceInfo(formats: [.msgpipe, .lines], maximumMessageSize: 0x0010_0000, serverMTU: 247, psm: 0x0081)
        #expect(info.bytes == bytes("02 01 09 00 00 00 10 00 f7 00 81 00"))
        #expect(try MsgPipeServiceInfo(decoding: info.bytes) == info)
        #expect(try MsgPipeServiceInfo(decoding: info.bytes + [0xAA]) == info, "later layouts append")
    }

    @Test func layoutOneAndAZeroPSMMeanNoChannel() throws {
        #expect(try MsgPipeServiceInfo(decoding: bytes("01 01 09 00 00 00 10 00 f7 00 81 00")).psm == nil,
                "layout 1 has no PSM field")
        #expect(try MsgPipeServiceInfo(decoding: bytes("02 01 09 00 00 00 10 00 f7 00 00 00")).psm == nil)
        #expect(try MsgPipeServiceInfo(decoding: bytes("02 01 09 00 00 00 10 00 f7 00 81")).psm == nil,
                "a truncated PSM is no PSM")
    }

    @Test(arguments: [GATTServiceProfile.msgpipe, .nordicUART])
    func aChannelAddsApplesPSMCharacteristic(profile: GATTServiceProfile) {
        let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247, psm: 0x0080)
        let attributes = profile.makeDatabase(info: info).attributes
        let psm = attributes.first { $0.type == GATTServiceProfile.channelPSM }
        #expect(psm?.value == [0x80, 0x00])
        #expect(GATTServiceProfile.channelPSM.description == "ABDD3056-28FA-441D-A470-55A75A52553A")
        let without = profile.makeDatabase(info: MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247))
        #expect(!without.attributes.contains { $0.type == GATTServiceProfile.channelPSM })
    }

    /// The PSM characteristic's one codec, for both roles and both backends.
    @Test func thePSMCharacteristicValueIsTwoBytesLittleEndianAndOnlyLEPSMsCount() {
        #expect(GATTServiceProfile.channelPSMValue(0x0085) == [0x85, 0x00])
        #expect(GATTServiceProfile.channelPSM(fromValue: [0x85, 0x00]) == 0x0085)
        #expect(GATTServiceProfile.channelPSM(fromValue: [0x25, 0x00]) == 0x0025, "a fixed SPSM is a channel too")
        #expect(GATTServiceProfile.channelPSM(fromValue: [0x85, 0x00, 0xFF]) == 0x0085, "later bytes are ignored")
        #expect(GATTServiceProfile.channelPSM(fromValue: [0x00, 0x00]) == nil)
        #expect(GATTServiceProfile.channelPSM(fromValue: [0x00, 0x01]) == nil, "0x0100 is no LE PSM")
        #expect(GATTServiceProfile.channelPSM(fromValue: [0x85]) == nil)
        #expect(GATTServiceProfile.channelPSM(fromValue: []) == nil)
    }

    @Test func aCentralTakingTheChannelLeavesTXUnsubscribedAndReportsNothing() async throws {
        let (a, b) = bearerPair()
        let peripheral = GATTLink(profile: .nordicUART)
        let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247, psm: 0x0085)
        let serving = Task { await peripheral.serve(b, info: info) }
        let central = GATTLink(profile: .nordicUART)
        var offered: UInt16?
        try await central.connect(a) { psm in
            offered = psm
            return true
        }
        #expect(offered == 0x0085, "read from the PSM characteristic (nus has no info characteristic)")
        #expect(central.peerPSM == 0x0085)
        await #expect(throws: LinkError.notConnected) { try await central.send([1]) }
        await central.disconnect()
        await peripheral.close()
        await serving.value
        await central.close()
        var events: [LinkEvent] = []
        for await event in central.events { events.append(event) }
        #expect(events.isEmpty, "no .connected, no .disconnected")
    }

    @Test func aCentralDecliningTheChannelConnectsOverGATT() async throws {
        let (a, b) = bearerPair()
        let peripheral = GATTLink()
        let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247, psm: 0x0090)
        let serving = Task { await peripheral.serve(b, info: info) }
        let central = GATTLink()
        try await central.connect(a) { _ in false }
        #expect(central.peerPSM == 0x0090)
        #expect(central.peerInfo?.psm == 0x0090)
        guard case .connected = await central.events.next() else {
            Issue.record("the GATT link connects")
            return
        }
        await central.close()
        await peripheral.close()
        await serving.value
    }
}
