import BLELink
import Glibc
import Testing
import Transport

/// The link over acquired descriptors, both sides on socketpairs as bluetoothd would hand them out.
@Suite(.timeLimit(.minutes(1)))
struct AcquiredLinkTests {
    /// A peripheral link and a "central" link over two SEQPACKET socketpairs (write and notify).
    static func pair(mtu: Int) throws -> (peripheral: AcquiredLink, central: AcquiredLink) {
        var write: [Int32] = [-1, -1]
        var notify: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #expect(socketpair(AF_UNIX, type, 0, &write) == 0)
        #expect(socketpair(AF_UNIX, type, 0, &notify) == 0)
        let size = AcquiredLink.maximumPacketSize(mtu: mtu)
        return (try AcquiredLink(sending: notify[0], receiving: write[0], maximumPacketSize: size),
                try AcquiredLink(sending: write[1], receiving: notify[1], maximumPacketSize: size))
    }

    @Test func packetSizeLeavesBluetoothdItsFiveBytes() {
        #expect(AcquiredLink.maximumPacketSize(mtu: 23) == 18)
        #expect(AcquiredLink.maximumPacketSize(mtu: 185) == 180)
        #expect(AcquiredLink.maximumPacketSize(mtu: 517) == 512)
        #expect(AcquiredLink.maximumPacketSize(mtu: 0) == 18)
        #expect(AcquiredLink.maximumPacketSize(mtu: 65535) == 512)
    }

    @Test func aTransportMessageOf100KiBCrossesBothWays() async throws {
        let (peripheral, central) = try Self.pair(mtu: 185)
        let centralTransport = Transport(link: central)
        let peripheralTransport = Transport(link: peripheral)
        let big = (0..<(100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let reply = Array("pong".utf8)
        async let received = peripheralTransport.messages.first { _ in true }
        try await centralTransport.send(big, timeout: .seconds(20))
        #expect(await received?.body == big)
        async let back = centralTransport.messages.first { _ in true }
        try await peripheralTransport.send(reply, timeout: .seconds(20))
        #expect(await back?.body == reply)
        await centralTransport.close()
        await peripheralTransport.close()
    }

    @Test func aClosedDescriptorIsTheDisconnect() async throws {
        let (peripheral, central) = try Self.pair(mtu: 23)
        var events = peripheral.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 18))
        await central.close()
        guard case .disconnected? = await events.next() else {
            Issue.record("no disconnect")
            return
        }
        #expect(await events.next() == nil)
        await #expect(throws: LinkError.self) { try await peripheral.send([1]) }
        await #expect(throws: LinkError.packetTooLarge(size: 19, limit: 18)) { try await peripheral.send(Array(repeating: 0, count: 19)) }
    }
}
