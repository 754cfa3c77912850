import BLELink
import Framing
import Glibc
import TestSupport
import Testing
import Transport

/// StreamLink over a UNIX SEQPACKET socketpair: the same code as on an L2CAP credit-based channel, where a
/// full socket stands for a channel out of credits.
@Suite("StreamLink")
struct StreamLinkTests {
    static func pair(sendBuffer: Int32? = nil) throws -> (Int32, Int32) {
        let (a, b) = try SeqPacketSocket.pair()
        if var size = sendBuffer {
            setsockopt(a, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        return (a, b)
    }

    static func packets(_ link: StreamLink, count: Int) async -> [[UInt8]] {
        var received: [[UInt8]] = []
        for await event in link.events {
            if case let .packet(packet) = event { received.append(packet) }
            if received.count == count { break }
        }
        return received
    }

    @Test func aStarvedSenderWaitsAndNeitherLosesNorReordersAPacket() async throws {
        let (a, b) = try Self.pair(sendBuffer: 4096)
        let sender = try StreamLink(adopting: a, sendUnit: 1024)
        let receiver = try StreamLink(adopting: b, sendUnit: 1024)
        let sent = (0 ..< 2000).map { index in (0 ..< 1 + index % 1000).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
        let sending = Task {
            for packet in sent { try await sender.send(packet) }
        }
        var received: [[UInt8]] = []
        for await event in receiver.events {
            guard case let .packet(packet) = event else { continue }
            received.append(packet)
            if received.count % 100 == 0 { try await Task.sleep(for: .milliseconds(5)) }  // a slow consumer
            if received.count == sent.count { break }
        }
        try await sending.value
        #expect(received == sent)
        await sender.close()
        await receiver.close()
    }

    /// A plain format's last value: the confirmed send returns only once the socket's queue is empty (here: the
    /// peer read it), so that closing the channel right after it loses nothing.
    @Test func aConfirmedSendReturnsOnlyOnceNothingIsQueued() async throws {
        let (a, b) = try Self.pair()
        let sender = try StreamLink(adopting: a, sendUnit: 1024, framed: false)
        try await sender.send([1, 2, 3])
        let confirmed = Task { () async throws -> ContinuousClock.Instant in
            try await sender.sendConfirmed([4, 5])
            return .now
        }
        try await Task.sleep(for: .milliseconds(100))
        let readAt = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(recv(b, &buffer, buffer.count, 0) == 3)
        #expect(recv(b, &buffer, buffer.count, 0) == 2)
        #expect(try await confirmed.value >= readAt, "it waited for the queue to empty")
        await sender.close()
        close(b)
    }

    @Test func aConfirmedSendThatNothingDrainsFailsAfterTheStall() async throws {
        let (a, b) = try Self.pair()
        let sender = try StreamLink(adopting: a, sendUnit: 1024, framed: false)
        let started = ContinuousClock.now
        await #expect(throws: LinkError.self) { try await sender.sendConfirmed([1], stall: .milliseconds(200)) }
        #expect(started.duration(to: .now) >= .milliseconds(200))
        await sender.close()
        close(b)
    }

    /// Where the peer takes large SDUs, msgpipe sends 2221-byte ones: with the SDU length, nine full K-frames of
    /// MPS 247 (a packet of 2219 bytes after the frame header); a peer's smaller MTU caps them.
    @Test func aLargeChannelMTUGetsSDUsOfNineFullKFrames() async throws {
        let (a, b) = try Self.pair()
        let framed = try StreamLink(adopting: a, sendUnit: 65535)
        let plain = try StreamLink(adopting: b, sendUnit: 65535, framed: false)
        #expect(framed.maximumPacketSize == 2219)
        #expect(plain.maximumPacketSize == 2221)
        #expect((StreamLink.preferredUnit + 2) % 247 == 0)
        let (c, d) = try Self.pair()
        let small = try StreamLink(adopting: c, sendUnit: 512)
        #expect(small.maximumPacketSize == 510)
        for link in [framed, plain, small] { await link.close() }
        close(d)
    }

    /// A plain format on a channel: each packet is one SDU as it is, each SDU one packet, no frame header.
    @Test func anUnframedLinkCarriesThePacketsBytesAsTheyAre() async throws {
        let (a, b) = try Self.pair()
        let sender = try StreamLink(adopting: a, sendUnit: 100, framed: false)
        #expect(sender.maximumPacketSize == 100)
        try await sender.send([0x53, 0x54, 0x41, 0x52, 0x54])
        var sdu = [UInt8](repeating: 0, count: 200)
        let count = sdu.withUnsafeMutableBytes { recv(b, $0.baseAddress, $0.count, 0) }
        #expect(Array(sdu.prefix(count)) == [0x53, 0x54, 0x41, 0x52, 0x54])
        let receiver = try StreamLink(adopting: b, sendUnit: 100, framed: false)
        _ = [UInt8]([1, 2, 3]).withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) }
        #expect(await Self.packets(receiver, count: 1) == [[1, 2, 3]])
        await sender.close()
        await receiver.close()
    }

    /// A phone writes a byte stream: frames split and joined across SDUs arrive as the same packets.
    @Test func framesCutAcrossSDUsArriveWhole() async throws {
        let (a, b) = try Self.pair()
        let receiver = try StreamLink(adopting: b, sendUnit: 512)
        let packets: [[UInt8]] = [[1], [2, 3], Array(repeating: 9, count: 700), [4, 5, 6]]
        var stream: [UInt8] = []
        for packet in packets { try StreamFrames.append(packet, to: &stream) }
        var offset = 0
        for size in [1, 2, 5, 300, 1, 400, 1000] where offset < stream.count {
            let end = min(stream.count, offset + size)
            _ = stream[offset ..< end].withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) }
            offset = end
        }
        #expect(await Self.packets(receiver, count: packets.count) == packets)
        close(a)
        await receiver.close()
    }

    @Test func aBrokenFrameEndsTheConnection() async throws {
        let (a, b) = try Self.pair()
        let receiver = try StreamLink(adopting: b, sendUnit: 512)
        let bad: [UInt8] = [0x01, 0x00, 0x41, 0x00, 0x00]
        _ = bad.withUnsafeBytes { send(a, $0.baseAddress, $0.count, 0) }
        var seen: [LinkEvent] = []
        for await event in receiver.events { seen.append(event) }
        #expect(seen.first == .connected(maximumPacketSize: 510))
        #expect(seen.dropFirst().first == .packet([0x41]))
        guard case .disconnected? = seen.last else {
            Issue.record("no disconnect: \(seen)")
            return
        }
        close(a)
    }

    @Test func transportCarriesAMessageOverIt() async throws {
        let (a, b) = try Self.pair()
        let left = Transport(link: try StreamLink(adopting: a, sendUnit: 2048))
        let right = Transport(link: try StreamLink(adopting: b, sendUnit: 2048))
        let body = (0 ..< 300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await left.send(body, timeout: hangGuard)
        var messages = right.messages.makeAsyncIterator()
        #expect(await messages.next()?.body == body)
        await left.close()
        await right.close()
    }
}
