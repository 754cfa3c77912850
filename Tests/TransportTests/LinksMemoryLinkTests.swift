import MemoryLinks
import Testing
@testable import Transport

@Suite("MemoryLink")
struct MemoryLinkTests {
    /// Reads the next `count` events of `link`.
    static func read(_ count: Int, from link: MemoryLink) async -> [LinkEvent] {
        var iterator = link.events.makeAsyncIterator()
        var events: [LinkEvent] = []
        for _ in 0..<count {
            guard let event = await iterator.next() else { break }
            events.append(event)
        }
        return events
    }

    @Test func pairConnectsBothEndsAndDeliversPacketsInOrderBothWays() async throws {
        let (a, b) = MemoryLink.pair(maximumPacketSize: 20, capacity: 8)
        try await a.send([1])
        try await a.send([2, 2])
        try await b.send([3])
        #expect(await Self.read(3, from: b) == [.connected(maximumPacketSize: 20), .packet([1]), .packet([2, 2])])
        #expect(await Self.read(2, from: a) == [.connected(maximumPacketSize: 20), .packet([3])])
    }

    @Test func oversizedPacketAndSendWhileDisconnectedThrow() async {
        let (a, _) = MemoryLink.pair(maximumPacketSize: 4, capacity: 8)
        await #expect(throws: LinkError.packetTooLarge(size: 5, limit: 4)) { try await a.send([0, 0, 0, 0, 0]) }
        await a.disconnect(reason: "test")
        await #expect(throws: LinkError.notConnected) { try await a.send([0]) }
    }

    @Test func fullPeerBufferSuspendsTheSenderAndNothingIsLost() async throws {
        let capacity = 4
        let (a, b) = MemoryLink.pair(maximumPacketSize: 8, capacity: capacity)
        let count = 300
        let sender = Task {
            for index in 0..<count { try await a.send([UInt8(index % 256)]) }
        }
        var iterator = b.events.makeAsyncIterator()
        #expect(await iterator.next() == .connected(maximumPacketSize: 8))
        for index in 0..<count {
            #expect(b.bufferedEvents <= capacity)
            #expect(await iterator.next() == .packet([UInt8(index % 256)]))
        }
        try await sender.value
        #expect(b.bufferedEvents == 0)
    }

    @Test func manyConcurrentSendersLoseNothingAndKeepTheirOwnOrder() async throws {
        let (a, b) = MemoryLink.pair(maximumPacketSize: 8, capacity: 3)
        let senders = 8
        let perSender = 100
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    for index in 0..<perSender { try await a.send([UInt8(sender), UInt8(index)]) }
                }
            }
            var next = [Int](repeating: 0, count: senders)
            var iterator = b.events.makeAsyncIterator()
            var received = 0
            while received < senders * perSender, let event = await iterator.next() {
                guard case let .packet(bytes) = event else { continue }
                #expect(Int(bytes[1]) == next[Int(bytes[0])], "sender \(bytes[0]) out of order")
                next[Int(bytes[0])] += 1
                received += 1
            }
            try await group.waitForAll()
            #expect(next == [Int](repeating: perSender, count: senders))
        }
    }

    @Test func disconnectFailsTheWaitingSenderAndReconnectRestoresTheLink() async throws {
        let (a, b) = MemoryLink.pair(maximumPacketSize: 8, capacity: 2)
        try await a.send([1])  // b's buffer is full now: the connected event and this packet
        let waiting = Task { try await a.send([2]) }
        await a.disconnect(reason: "radio off")
        await #expect(throws: LinkError.self) { try await waiting.value }
        await b.reconnect()
        let events = await Self.read(4, from: b)
        #expect(
            events == [
                .connected(maximumPacketSize: 8), .packet([1]), .disconnected(reason: "radio off"),
                .connected(maximumPacketSize: 8),
            ])
        try await a.send([3])
        #expect(await Self.read(1, from: b) == [.packet([3])])
    }

    @Test func maximumPacketSizeChangeIsReportedAndEnforced() async throws {
        let (a, b) = MemoryLink.pair(maximumPacketSize: 20, capacity: 8)
        await a.changeMaximumPacketSize(244)
        try await a.send([UInt8](repeating: 7, count: 244))
        let events = await Self.read(3, from: b)
        #expect(events.dropFirst().first == .maximumPacketSizeChanged(244))
        #expect(events.last == .packet([UInt8](repeating: 7, count: 244)))
        await a.changeMaximumPacketSize(20)
        await #expect(throws: LinkError.packetTooLarge(size: 21, limit: 20)) { try await a.send(.init(repeating: 0, count: 21)) }
    }

    @Test func closeFinishesOwnEventsDisconnectsThePeerAndFailsLaterSends() async throws {
        let (a, b) = MemoryLink.pair(maximumPacketSize: 8, capacity: 8)
        await a.close()
        await #expect(throws: LinkError.closed) { try await a.send([1]) }
        await #expect(throws: LinkError.notConnected) { try await b.send([1]) }
        #expect(await Self.read(3, from: a) == [.connected(maximumPacketSize: 8)])
        #expect(
            await Self.read(2, from: b) == [
                .connected(maximumPacketSize: 8), .disconnected(reason: "the peer closed the link"),
            ])
    }
}
