import BLELink
import GATT
import Testing
import TestSupport
import Synchronization
import Transport

/// A central's Transport over a ``RelayLink`` resumes its message across connections whatever carries each one:
/// GATT (an ATT bearer pair) first, then a channel (``StreamLink`` over a SEQPACKET socketpair), as a central
/// whose peripheral opened its channel only after a restart would.
@Suite struct ResumeAcrossCarriersTests {
    @Test func aMessageCutOnGATTResumesOverAChannelAndArrivesOnce() async throws {
        let listener = TransportListener(options: TransportOptions.fastForTests)
        let relay = RelayLink()
        let counted = CountedLink(relay)
        let client = Transport(link: counted, options: TransportOptions.fastForTests)
        // Connection 1: GATT, a link per connection as the central's ChannelCentralLink makes them.
        let (a, b) = try bearerPair()
        let peripheral = GATTLink()
        let serving = Task { await peripheral.serve(b, info: MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247)) }
        let accepting = Task { await listener.accept(peripheral, peer: "gatt") }
        let central = GATTLink()
        try await central.connect(a, mtu: 247)
        let carrying = Task { await relay.carry(central) }
        let body = (0 ..< 120_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let sending = Task { try await client.send(body) }
        let session = try #require(await listener.sessions.next())
        let reading = Task {
            var bodies: [[UInt8]] = []
            for await message in session.transport.messages { bodies.append(message.body) }
            return bodies
        }
        // Part of the message went over GATT (about 500 of its 244-byte packets), not all of it.
        while counted.sent.load(ordering: .relaxed) < 100 { await Task.yield() }
        await relay.dropConnection()
        _ = await carrying.value
        await serving.value
        await peripheral.close()
        await accepting.value
        // Connection 2: the channel.
        let (c, d) = try SeqPacketSocket.pair()
        let channelCentral = try StreamLink(adopting: c, sendUnit: StreamLink.preferredUnit)
        let channelPeripheral = try StreamLink(adopting: d, sendUnit: StreamLink.preferredUnit)
        let accepting2 = Task { await listener.accept(channelPeripheral, peer: "l2cap") }
        let carrying2 = Task { await relay.carry(channelCentral) }
        try await sending.value
        try await client.send([7, 8, 9])
        await client.close()
        await listener.close()
        await accepting2.value
        _ = await carrying2.value
        #expect(await reading.value == [body, [7, 8, 9]])
        #expect(session.connections == 2)
        #expect(session.peer == "l2cap")
    }
}

/// A link that counts the packets handed to it.
private final class CountedLink<Base: Link>: Link {
    let base: Base
    let sent = Atomic<Int>(0)
    init(_ base: Base) { self.base = base }
    var events: Base.Events { base.events }
    func send(_ packet: [UInt8]) async throws {
        try await base.send(packet)
        sent.add(1, ordering: .relaxed)
    }
    func close() async { await base.close() }
}
