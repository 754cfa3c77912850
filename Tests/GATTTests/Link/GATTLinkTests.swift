@testable import GATT
import Testing
import Transport
import TestSupport

@Suite struct GATTLinkTests {
    @Test func bothSidesConnectWithPacketSizeMTUMinusThree() async throws {
        let pair = try await LinkPair(serverMTU: 185)
        #expect(await pair.central.events.next() == .connected(maximumPacketSize: 182))
        #expect(await pair.peripheral.events.next() == .connected(maximumPacketSize: 182))
        #expect(pair.central.peerInfo == LinkPair.servedInfo)
        await pair.close()
    }

    @Test func eachSideShowsItsCurrentBearerOnlyWhileConnected() async throws {
        let pair = try await LinkPair()
        _ = await pair.central.events.next()
        _ = await pair.peripheral.events.next()
        let central = try #require(pair.central.bearer)
        let peripheral = try #require(pair.peripheral.bearer)
        #expect(central !== peripheral, "each side holds its own end")
        await pair.disconnect(reason: "test")
        #expect(pair.central.bearer == nil)
        #expect(pair.peripheral.bearer == nil)
        await pair.close()
    }

    @Test(arguments: [(23, 20), (185, 182), (247, 244), (515, 512), (517, 512)])
    func packetSizeIsMTUMinusThreeButAt512AtMost(mtu: Int, packetSize: Int) async throws {
        let pair = try await LinkPair(serverMTU: mtu)
        #expect(await pair.central.events.next() == .connected(maximumPacketSize: packetSize))
        #expect(await pair.peripheral.events.next() == .connected(maximumPacketSize: packetSize))
        let largest = (0..<packetSize).map { UInt8(truncatingIfNeeded: $0) }
        try await pair.central.send(largest)
        try await pair.peripheral.send(largest)
        #expect(await pair.peripheral.events.next() == .packet(largest))
        #expect(await pair.central.events.next() == .packet(largest))
        let limit = LinkError.packetTooLarge(size: packetSize + 1, limit: packetSize)
        await #expect(throws: limit) { try await pair.central.send(largest + [0]) }
        await #expect(throws: limit) { try await pair.peripheral.send(largest + [0]) }
        await pair.close()
    }

    @Test(arguments: [GATTServiceProfile.msgpipe, .nordicUART])
    func packetsRoundTripInOrderBothWays(_ profile: GATTServiceProfile) async throws {
        let pair = try await LinkPair(profile: profile)
        _ = await pair.central.events.next()
        _ = await pair.peripheral.events.next()
        let packets = (0..<500).map { index in (0..<(index % 244 + 1)).map { UInt8(truncatingIfNeeded: index &+ $0) } }
        let up = Task { for packet in packets { try await pair.central.send(packet) } }
        let down = Task { for packet in packets { try await pair.peripheral.send(packet) } }
        for packet in packets { #expect(await pair.peripheral.events.next() == .packet(packet)) }
        for packet in packets { #expect(await pair.central.events.next() == .packet(packet)) }
        try await up.value
        try await down.value
        await pair.close()
    }

    @Test func packetOverTheLimitIsRefused() async throws {
        let pair = try await LinkPair()
        _ = await pair.central.events.next()
        _ = await pair.peripheral.events.next()
        await #expect(throws: LinkError.packetTooLarge(size: 245, limit: 244)) {
            try await pair.central.send(Array(repeating: 0, count: 245))
        }
        await #expect(throws: LinkError.packetTooLarge(size: 245, limit: 244)) {
            try await pair.peripheral.send(Array(repeating: 0, count: 245))
        }
        await pair.close()
    }

    /// A central's renewal writes TX's CCCD off, then on again with what it enabled at first (a peripheral's
    /// bluetoothd then acquires a new notify descriptor, BlueZ issue #1452); the link stays connected.
    @Test func aCentralsRenewalWritesTheCCCDOffThenOnAgain() async throws {
        let (centralBearer, serverBearer) = bearerPair()
        let database = GATTServiceProfile.msgpipe.makeDatabase(info: LinkPair.info)
        let tx = try #require(database.valueHandle(of: GATTServiceProfile.msgpipe.tx))
        let server = GATTServerConnection(bearer: serverBearer, server: GATTServer(database: database))
        let running = Task { await server.run() }
        let central = GATTLink()
        try await central.connect(centralBearer)
        #expect(await central.events.next() == .connected(maximumPacketSize: 244))
        /// The next change of TX's subscription the server saw.
        func nextSubscription() async -> GATTSubscription? {
            while let event = await server.events.next() {
                if case let .server(.subscriptionChanged(handle, subscription)) = event, handle == tx { return subscription }
            }
            return nil
        }
        #expect(await nextSubscription() == [.notifications, .indications])
        await central.renewIncoming()
        #expect(await nextSubscription() == [])
        #expect(await nextSubscription() == [.notifications, .indications])
        try await server.notify(valueHandle: tx, value: [1, 2][...])
        #expect(await central.events.next() == .packet([1, 2]))
        await central.close()
        server.close()
        await running.value
    }

    @Test func sendBeforeConnectingIsNotConnectedAndAfterCloseIsClosed() async throws {
        let link = GATTLink()
        await #expect(throws: LinkError.notConnected) { try await link.send([1]) }
        await link.close()
        await #expect(throws: LinkError.closed) { try await link.send([1]) }
        #expect(await link.events.next() == nil)
    }

    @Test func centralClosingIsADisconnectAtThePeripheral() async throws {
        let pair = try await LinkPair()
        _ = await pair.peripheral.events.next()
        await pair.central.close()
        guard case .disconnected = await pair.peripheral.events.next() else {
            Issue.record("expected a disconnect")
            return
        }
        await #expect(throws: LinkError.notConnected) { try await pair.peripheral.send([1]) }
        await pair.peripheral.close()
        await pair.servingEnded()
    }

    @Test func slowReceiverBackpressuresTheSenderWithoutLosingPackets() async throws {
        let pair = try await LinkPair()
        _ = await pair.central.events.next()
        _ = await pair.peripheral.events.next()
        let count = 20_000
        let sender = Task {
            for index in 0..<count { try await pair.central.send(withUnsafeBytes(of: UInt32(index), Array.init)) }
        }
        // Nobody reads for a while: the sender must stall, not drop or buffer without bound.
        for _ in 0..<1000 { await Task.yield() }
        for index in 0..<count {
            #expect(await pair.peripheral.events.next() == .packet(withUnsafeBytes(of: UInt32(index), Array.init)))
        }
        try await sender.value
        await pair.close()
    }

    @Test func peripheralIndicatesWhenTheCentralEnabledOnlyIndications() async throws {
        let (a, b) = bearerPair()
        let peripheral = GATTLink()
        let serving = Task { await peripheral.serve(b, info: LinkPair.info) }
        let client = GATTClient(bearer: a)
        let service = try await client.discoverPrimaryService(GATTServiceProfile.msgpipe.service)
        let tx = try await client.characteristic(GATTServiceProfile.msgpipe.tx, of: service)
        try await client.subscribe(to: tx, indications: true)
        #expect(await peripheral.events.next() == .connected(maximumPacketSize: 20))
        try await peripheral.send([1, 2, 3])
        try await peripheral.send([4])
        #expect(await client.notifications.next() == GATTNotification(handle: tx.valueHandle, value: [1, 2, 3], isIndication: true))
        #expect(await client.notifications.next() == GATTNotification(handle: tx.valueHandle, value: [4], isIndication: true))
        client.close()
        await peripheral.close()
        await serving.value
    }

    @Test func aServerWhoseInfoNamesASmallerMTUGetsWritesThatFitIt() async throws {
        // msgpipe beside bluetoothd before 5.69 says 513: longer written values are dropped there.
        let (a, b) = bearerPair()
        let peripheral = GATTLink()
        let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 513)
        let serving = Task { await peripheral.serve(b, info: info, configuration: GATTServer.Configuration(maximumMTU: 517)) }
        let central = GATTLink()
        try await central.connect(a, mtu: 517)
        #expect(await central.events.next() == .connected(maximumPacketSize: 510))
        await #expect(throws: LinkError.packetTooLarge(size: 511, limit: 510)) {
            try await central.send([UInt8](repeating: 1, count: 511))
        }
        await central.close()
        await peripheral.close()
        await serving.value
    }

    @Test func missingServiceFailsTheCentralWithNotFound() async throws {
        let (a, b) = bearerPair()
        let peripheral = GATTLink(profile: .nordicUART)
        let serving = Task { await peripheral.serve(b, info: LinkPair.info) }
        let central = GATTLink(profile: .msgpipe)
        await #expect(throws: ATTError.notFound(GATTServiceProfile.msgpipe.service)) { try await central.connect(a) }
        await peripheral.close()
        await serving.value
    }
}

@Suite struct MsgPipeServiceInfoTests {
    @Test func infoValueHasTheDocumentedLayout() throws {
        let info = MsgPipeServiceInfo(protocolVersion: 1, formats: [.msgpipe, .lines], maximumMessageSize: 0x0010_0000,
                                      serverMTU: 247)
        #expect(info.bytes == bytes("01 01 09 00 00 00 10 00 f7 00"))
        #expect(try MsgPipeServiceInfo(decoding: info.bytes) == info)
        #expect(try MsgPipeServiceInfo(decoding: info.bytes + [0xAA]) == info, "later layouts append")
    }

    @Test func truncatedInfoIsRejected() {
        let full = bytes("01 01 09 00 00 00 10 00 f7 00")
        for length in 0..<full.count {
            #expect(throws: ATTDecodeError.self) { try MsgPipeServiceInfo(decoding: Array(full.prefix(length))) }
        }
    }

    /// The attribute table docs/PROTOCOL.md section 5.1 gives: handle, type, value.
    @Test(arguments: [
        (GATTServiceProfile.msgpipe, [
            (1, "2800", "70 69 70 67 73 6d 1a 9f 2b 4e 5d 8c 01 00 50 4d"),
            (2, "2803", "0c 03 00 70 69 70 67 73 6d 1a 9f 2b 4e 5d 8c 02 00 50 4d"), (3, "4D500002", ""), (4, "2901", "52 58"),
            (5, "2803", "30 06 00 70 69 70 67 73 6d 1a 9f 2b 4e 5d 8c 03 00 50 4d"), (6, "4D500003", ""), (7, "2902", "00 00"),
            (8, "2901", "54 58"),
            (9, "2803", "02 0a 00 70 69 70 67 73 6d 1a 9f 2b 4e 5d 8c 04 00 50 4d"), (10, "4D500004", "01 01 0f 00 00 00 10 00 f7 00"),
            (11, "2901", "69 6e 66 6f"),
        ]),
        (GATTServiceProfile.nordicUART, [
            (1, "2800", "9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 01 00 40 6e"),
            (2, "2803", "0c 03 00 9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 02 00 40 6e"), (3, "6E400002", ""), (4, "2901", "52 58"),
            (5, "2803", "10 06 00 9e ca dc 24 0e e5 a9 e0 93 f3 a3 b5 03 00 40 6e"), (6, "6E400003", ""), (7, "2902", "00 00"),
            (8, "2901", "54 58"),
        ]),
    ] as [(GATTServiceProfile, [(UInt16, String, String)])])
    func serviceHasTheDocumentedAttributeTable(profile: GATTServiceProfile, table: [(UInt16, String, String)]) {
        let attributes = profile.makeDatabase(info: LinkPair.info).attributes
        #expect(attributes.count == table.count)
        for (attribute, (handle, type, value)) in zip(attributes, table) {
            #expect(attribute.handle == handle)
            #expect(attribute.type.description.hasPrefix(type), "handle \(handle): \(attribute.type)")
            #expect(attribute.value == bytes(value), "handle \(handle)")
        }
    }

    @Test func profilesAreNamedForTheCommandLine() {
        #expect(GATTServiceProfile.named("msgpipe") == .msgpipe)
        #expect(GATTServiceProfile.named("nus") == .nordicUART)
        #expect(GATTServiceProfile.named("x") == nil)
        #expect(GATTServiceProfile.nordicUART.service.description == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    }
}
