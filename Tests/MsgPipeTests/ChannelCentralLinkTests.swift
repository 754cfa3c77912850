import BLELink
import GATT
import MsgPipe
import Testing
import Transport

/// The kernel backend's central when no channel carries the data: a plain format's last packet is still
/// confirmed on GATT (a Write Request), as on a central that never looks for a channel.
@Suite struct ChannelCentralLinkTests {
    @Test(arguments: [LinkMode.auto, .gatt])
    func onGATTAPlainFormatsLastPacketIsConfirmed(mode: LinkMode) async throws {
        let (a, b) = try SeqPacketSocket.pair()
        let peripheral = GATTLink()
        let info = MsgPipeServiceInfo(formats: [.lines], maximumMessageSize: 1 << 20, serverMTU: 247)
        let peripheralBearer = try ATTBearer(adopting: b)
        let serving = Task { await peripheral.serve(peripheralBearer, info: info) }
        let central = ChannelCentralLink(profile: .msgpipe, mode: mode, framed: false)
        let adapter = BluetoothAdapter(index: 0, info: try ControllerInfo(decoding: [UInt8](repeating: 0, count: 280)[...]))
        let summary = try await central.connect(
            try ATTBearer(adopting: a), peer: BluetoothPeer(address: .any), local: adapter, security: .low,
            timeout: .seconds(5))
        #expect(summary.hasPrefix("gatt"), "\(summary)")
        let link: any PipeLink = central
        #expect(link.canConfirm)
        try await link.sendConfirmed(Array("last\n".utf8))
        var events = peripheral.events.makeAsyncIterator()
        while let event = await events.next() {
            if case let .packet(packet) = event {
                #expect(packet == Array("last\n".utf8))
                break
            }
        }
        await central.close()
        await peripheral.close()
        await serving.value
    }
}
