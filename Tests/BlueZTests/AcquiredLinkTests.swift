import BLELink
import BlueZLink
import SDBus
import Glibc
import Synchronization
import TestSupport
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
        try await centralTransport.send(big, timeout: hangGuard)
        #expect(await received?.body == big)
        async let back = centralTransport.messages.first { _ in true }
        try await peripheralTransport.send(reply, timeout: hangGuard)
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

    /// A SEQPACKET socketpair: (ours, the other end bluetoothd would hold).
    static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    /// Waits up to 5 s for one datagram on `fd`; nil on timeout, [] at EOF.
    static func receive(_ fd: Int32) -> [UInt8]? {
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 5_000) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 600)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count < 0 ? nil : Array(buffer.prefix(count))
    }

    /// A peripheral's link through bluetoothd 5.76+ outlives its notify descriptor (bluez#1452: bluetoothd
    /// closed it when another central left): the central's writes still arrive, a send waits, and the next
    /// subscription's descriptor carries it.
    @Test func aPeripheralLinkOutlivesItsNotifyDescriptorAndSendsOnTheNextOne() async throws {
        let (notify, bluetoothdNotify) = try Self.socketPair()
        let (write, bluetoothdWrite) = try Self.socketPair()  // closed below: the hang-up that ends the link
        let lost = Mutex(0)
        let (senderLost, reportLoss) = AsyncStream<Void>.makeStream()
        let link = try AcquiredLink(sending: notify, receiving: write, maximumPacketSize: 100,
                                    keepsConnectionWithoutSender: true, onSenderLost: {
                                        lost.withLock { $0 += 1 }
                                        reportLoss.yield()
                                    })
        var events = link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 100))
        try await link.send([1])
        #expect(Self.receive(bluetoothdNotify) == [1])
        close(bluetoothdNotify)
        #expect(send(bluetoothdWrite, [UInt8]([2]), 1, 0) == 1)
        #expect(await events.next() == .packet([2]), "the link lives on: the central's writes still arrive")
        // Each descriptor is watched on its own: the hang-up may be seen after the write that followed it.
        var losses = senderLost.makeAsyncIterator()
        #expect(await losses.next() != nil, "the notify descriptor's hang-up is reported")
        let sending = Task { try await link.send([3, 4]) }
        let (again, bluetoothdAgain) = try Self.socketPair()
        defer { close(bluetoothdAgain) }
        try link.attach(sending: again)
        try await sending.value
        #expect(Self.receive(bluetoothdAgain) == [3, 4])
        #expect(lost.withLock { $0 } == 1, "one hang-up, one report")
        // The write descriptor hanging up still ends the connection.
        close(bluetoothdWrite)
        guard case .disconnected? = await events.next() else {
            Issue.record("no disconnect")
            return
        }
    }

    /// Without `keepsConnectionWithoutSender` (a central's link, or one central at a time) the notify
    /// descriptor hanging up ends the connection, as does a lone notify descriptor's.
    @Test func withoutKeepingTheConnectionTheNotifyDescriptorsHangUpEndsIt() async throws {
        for keeps in [false, true] {
            let (notify, bluetoothdNotify) = try Self.socketPair()
            let (write, bluetoothdWrite) = try Self.socketPair()
            defer { close(bluetoothdWrite) }
            let link = try AcquiredLink(sending: notify, receiving: keeps ? nil : write, maximumPacketSize: 100,
                                        keepsConnectionWithoutSender: keeps)
            if keeps { close(write) }
            var events = link.events.makeAsyncIterator()
            #expect(await events.next() == .connected(maximumPacketSize: 100))
            close(bluetoothdNotify)
            guard case .disconnected? = await events.next() else {
                Issue.record("no disconnect (keeps \(keeps))")
                continue
            }
        }
    }

    /// A central's renewal closes its notify descriptor (bluetoothd sees the hang-up and unsubscribes) and
    /// receives on the one `resubscribe` returns; the connection never drops.
    @Test func aCentralsRenewalClosesTheNotifyDescriptorAndReceivesOnTheNewOne() async throws {
        let (notify, bluetoothdNotify) = try Self.socketPair()
        let (write, bluetoothdWrite) = try Self.socketPair()
        defer { close(bluetoothdWrite) }
        let (renewed, bluetoothdRenewed) = try Self.socketPair()
        defer { close(bluetoothdRenewed) }
        let link = try AcquiredLink(sending: write, receiving: notify, maximumPacketSize: 100,
                                    resubscribe: { renewed })
        var events = link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 100))
        await link.renewIncoming()
        #expect(Self.receive(bluetoothdNotify) == [], "the old notify descriptor was closed")
        close(bluetoothdNotify)
        #expect(send(bluetoothdRenewed, [UInt8]([5, 6]), 2, 0) == 2)
        #expect(await events.next() == .packet([5, 6]))
        try await link.send([7])
        #expect(Self.receive(bluetoothdWrite) == [7])
    }

    /// A renewal after which nothing arrived is fruitless: the next request ends the connection instead of
    /// renewing again (the reconnect then starts afresh); a packet in between keeps the link renewing.
    @Test func aSecondRenewalWithNoPacketSinceTheFirstEndsTheConnection() async throws {
        let (notify, bluetoothdNotify) = try Self.socketPair()
        let (write, bluetoothdWrite) = try Self.socketPair()
        defer { close(bluetoothdNotify); close(bluetoothdWrite) }
        var peers: [Int32] = []
        defer { peers.forEach { close($0) } }
        var fresh: [Int32] = []
        for _ in 0..<2 {
            let (ours, theirs) = try Self.socketPair()
            fresh.append(ours)
            peers.append(theirs)
        }
        let descriptors = Mutex(fresh)
        let calls = Mutex(0)
        struct NoMoreDescriptors: Error {}
        let link = try AcquiredLink(sending: write, receiving: notify, maximumPacketSize: 100, resubscribe: {
            calls.withLock { $0 += 1 }
            guard let next = descriptors.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw NoMoreDescriptors() }
            return next
        })
        var events = link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 100))
        await link.renewIncoming()
        #expect(send(peers[0], [UInt8]([1]), 1, 0) == 1)
        #expect(await events.next() == .packet([1]), "the first renewal brought a packet")
        await link.renewIncoming()
        #expect(calls.withLock { $0 } == 2, "a renewal that brought a packet does not end the link")
        await link.renewIncoming()
        guard case let .disconnected(reason)? = await events.next() else {
            Issue.record("a fruitless renewal did not end the link")
            return
        }
        #expect(reason.hasPrefix("a renewed subscription brought no packet"), "\(reason)")
        #expect(calls.withLock { $0 } == 2, "no third subscription")
    }

    /// A renewal whose resubscription fails ends the connection with the reason.
    @Test func aFailedResubscriptionIsTheDisconnect() async throws {
        let (notify, bluetoothdNotify) = try Self.socketPair()
        let (write, bluetoothdWrite) = try Self.socketPair()
        defer { close(bluetoothdNotify); close(bluetoothdWrite) }
        struct Refused: Error {}
        let link = try AcquiredLink(sending: write, receiving: notify, maximumPacketSize: 100,
                                    resubscribe: { throw Refused() })
        var events = link.events.makeAsyncIterator()
        #expect(await events.next() == .connected(maximumPacketSize: 100))
        await link.renewIncoming()
        guard case let .disconnected(reason)? = await events.next() else {
            Issue.record("no disconnect")
            return
        }
        #expect(reason.hasPrefix("subscribing again failed"))
        await #expect(throws: LinkError.self) { try await link.send([1]) }
    }
}
