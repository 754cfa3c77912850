import Testing
import Transport
@testable import BLELink

/// A central and a peripheral ``GATTLink`` over one socketpair, set up and connected.
struct LinkPair {
    let central: GATTLink
    let peripheral: GATTLink
    let serving: Task<Void, Never>
    static let info = MsgPipeServiceInfo(maximumMessageSize: 1 << 20, serverMTU: 247)

    init(profile: GATTServiceProfile = .msgpipe, serverMTU: Int = 247, centralMTU: Int = 517) async throws {
        let (a, b) = try bearerPair()
        central = GATTLink(profile: profile)
        peripheral = GATTLink(profile: profile)
        serving = Task { [peripheral] in
            await peripheral.serve(b, info: Self.info, configuration: .init(maximumMTU: serverMTU))
        }
        try await central.connect(a, mtu: centralMTU)
    }

    func close() async {
        await central.close()
        await peripheral.close()
        await serving.value
    }
}

@Suite struct GATTLinkTests {
    @Test func bothSidesConnectWithPacketSizeMTUMinusThree() async throws {
        let pair = try await LinkPair(serverMTU: 185)
        #expect(await pair.central.events.next() == .connected(maximumPacketSize: 182))
        #expect(await pair.peripheral.events.next() == .connected(maximumPacketSize: 182))
        #expect(pair.central.peerInfo == LinkPair.info)
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
        await pair.serving.value
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

    @Test func missingServiceFailsTheCentralWithNotFound() async throws {
        let (a, b) = try bearerPair()
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

    @Test func profilesAreNamedForTheCommandLine() {
        #expect(GATTServiceProfile.named("msgpipe") == .msgpipe)
        #expect(GATTServiceProfile.named("nus") == .nordicUART)
        #expect(GATTServiceProfile.named("x") == nil)
        #expect(GATTServiceProfile.nordicUART.service.description == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    }
}
