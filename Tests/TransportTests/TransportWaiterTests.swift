import MemoryLinks
import TestSupport
import Testing
import Transport

/// Transport's waits go through Backpressure: submissions wait for room at a `ReadinessGate`, sequential
/// requests take turns for a `CreditPool` credit. Cancelling or closing ends a wait with Transport's errors.
@Suite struct TransportWaiterTests {
    private static func options(queued: Int = 64, sequential: Bool = false) -> TransportOptions {
        var options = TransportOptions()
        options.endpoint.initialRetransmissionTimeout = .milliseconds(50)
        options.endpoint.minimumRetransmissionTimeout = .milliseconds(20)
        options.endpoint.acknowledgementDelay = .milliseconds(2)
        options.endpoint.maximumQueuedMessages = queued
        options.sequentialRequests = sequential
        return options
    }

    @Test func sendsBeyondTheQueueLimitWaitForRoomAndAllArrive() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 20)
        let sender = Transport(link: left, options: Self.options(queued: 1))
        let receiver = Transport(link: right, options: Self.options())
        let count = 6
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count { group.addTask { try await sender.send([UInt8(index)] + payload(size: 300, seed: 9)) } }
            var seen: Set<UInt8> = []
            for await message in receiver.messages {
                seen.insert(message.body[0])
                if seen.count == count { break }
            }
            try await group.waitForAll()
            #expect(seen == Set((0..<count).map(UInt8.init)))
        }
        await sender.close()
        await receiver.close()
    }

    @Test func closeFailsSendsWaitingForRoomWithClosed() async throws {
        let (left, _) = MemoryLink.pair(maximumPacketSize: 20)
        let sender = Transport(link: left, options: Self.options(queued: 1))
        let sends = (0..<4).map { index in Task { try await sender.send([UInt8(index)]) } }
        await sender.close()
        for send in sends { await #expect(throws: TransportError.closed) { try await send.value } }
    }

    @Test func sequentialRequestCancelledWhileWaitingForItsTurnThrowsCancelledAndTheNextOneRuns() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 20)
        let client = Transport(link: left, options: Self.options(sequential: true))
        let server = Transport(link: right, options: Self.options())
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        let (arrived, arrival) = AsyncStream.makeStream(of: Void.self)
        let serving = Task {
            await server.serveRequests { request in
                arrival.yield()
                if request.body == [1] { for await _ in release { break } }
                return request.body + request.body
            }
        }
        let first = Task { try await client.request([1], timeout: hangGuard) }
        var arrivals = arrived.makeAsyncIterator()
        _ = await arrivals.next()  // the first request holds the turn and waits at the server
        let second = Task { try await client.request([2], timeout: hangGuard) }
        second.cancel()
        await #expect(throws: TransportError.cancelled) { try await second.value }
        releaser.yield()
        #expect(try await first.value == [1, 1])
        #expect(try await client.request([3], timeout: hangGuard) == [3, 3])
        await client.close()
        await server.close()
        await serving.value
    }

    @Test func closeFailsRequestsWaitingForTheirTurnWithClosed() async throws {
        let (left, _) = MemoryLink.pair(maximumPacketSize: 20)
        let client = Transport(link: left, options: Self.options(sequential: true))
        let requests = (0..<3).map { index in Task { try await client.request([UInt8(index)], timeout: hangGuard) } }
        await client.close()
        for request in requests { await #expect(throws: TransportError.closed) { try await request.value } }
    }
}
