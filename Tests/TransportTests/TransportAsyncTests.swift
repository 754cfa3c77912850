import MemoryLinks
import TestSupport
import Testing
import Transport

/// The async `Transport` over in-memory links (helper E's MemoryLink and FaultInjectingLink).
@Suite struct TransportAsyncTests {
    @Test func sendCompletesAndTheMessageArrivesOnce() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 20)
        let sender = Transport(link: left, options: TransportOptions.fastForTests)
        let receiver = Transport(link: right, options: TransportOptions.fastForTests)
        let body = payload(size: 3000, seed: 1)
        async let received = receiver.messages.first { _ in true }
        try await sender.send(body)
        #expect(await received?.body == body)
        // No retransmission count here: on a busy machine the tests' short timers may fire before an ack is
        // scheduled. Lossless means none in simulated time (EndpointFaultFreeTests).
        await sender.close()
        await receiver.close()
    }

    @Test("submit queues in call order; each receipt gives its outcome, also one that arrived before it was awaited")
    func submittedMessagesArriveInOrderAndEachReceiptSettles() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 40)
        let sender = Transport(link: left, options: TransportOptions.fastForTests)
        let receiver = Transport(link: right, options: TransportOptions.fastForTests)
        let bodies = (0 ..< 20).map { [UInt8($0)] + payload(size: 30 * $0, seed: UInt64($0)) }
        var receipts: [SendReceipt] = []
        for body in bodies { receipts.append(try await sender.submit(body)) }
        var seen: [[UInt8]] = []
        for await message in receiver.messages {
            seen.append(message.body)
            if seen.count == bodies.count { break }
        }
        #expect(seen == bodies)
        try await Task.sleep(for: .milliseconds(200))  // the last acknowledgements arrive before anyone awaits them
        for receipt in receipts { try await receipt.acknowledged() }
        await sender.close()
        await receiver.close()
        // A transport closed before the peer acknowledged settles what is unclaimed with `closed` (nobody answers
        // on this link).
        let (lonely, _) = MemoryLink.pair(maximumPacketSize: 40)
        let unanswered = Transport(link: lonely, options: TransportOptions.fastForTests)
        let late = try await unanswered.submit([1, 2, 3])
        await unanswered.close()
        await #expect(throws: TransportError.closed) { try await late.acknowledged() }
    }

    @Test func manyConcurrentSendersEachKeepTheirOrder() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 61)
        let sender = Transport(link: left, options: TransportOptions.fastForTests)
        let receiver = Transport(link: right, options: TransportOptions.fastForTests)
        let senders = 6
        let perSender = 5
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0 ..< senders {
                group.addTask {
                    for index in 0 ..< perSender {
                        try await sender.send([UInt8(task), UInt8(index)] + payload(size: 200 * index, seed: UInt64(task)))
                    }
                }
            }
            var seen: [[UInt8]] = []
            for await message in receiver.messages {
                seen.append(Array(message.body.prefix(2)))
                if seen.count == senders * perSender { break }
            }
            try await group.waitForAll()
            for task in 0 ..< senders {
                #expect(seen.filter { $0[0] == UInt8(task) }.map { $0[1] } == (0 ..< perSender).map(UInt8.init))
            }
        }
        await sender.close()
        await receiver.close()
    }

    @Test(arguments: [UInt64(1), 2])
    func faultyLinkDeliversEveryMessageExactlyOnce(seed: UInt64) async throws {
        let faults = LinkFaults(drop: 0.05, duplicate: 0.02, reorder: 0.02, corrupt: 0.01)
        let (left, right) = FaultInjectingLink<MemoryLink>.pair(maximumPacketSize: 20, faults: faults, seed: seed)
        let sender = Transport(link: left, options: TransportOptions.fastForTests)
        let receiver = Transport(link: right, options: TransportOptions.fastForTests)
        let bodies = (0 ..< 8).map { payload(size: 700 * $0, seed: seed + UInt64($0)) }
        let receiving = Task {
            var received: [[UInt8]] = []
            for await message in receiver.messages {
                received.append(message.body)
                if received.count == bodies.count { break }
            }
            return received
        }
        for body in bodies { try await sender.send(body) }
        #expect(await receiving.value == bodies)
        #expect(await sender.retransmittedSegments > 0)  // the drops were made up for
        await sender.close()
        await receiver.close()
    }

    @Test func requestsAreServedOneAtATimeInOrder() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 20)
        var options = TransportOptions.fastForTests
        options.sequentialRequests = true
        let client = Transport(link: left, options: options)
        let server = Transport(link: right, options: TransportOptions.fastForTests)
        let serving = Task { await server.serveRequests { request in Array(request.body.reversed()) } }
        let responses = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0 ..< 5 {
                group.addTask { (index, try await client.request(Array("command \(index)".utf8), timeout: hangGuard)) }
            }
            var responses: [Int: [UInt8]] = [:]
            for try await (index, response) in group { responses[index] = response }
            return responses
        }
        for index in 0 ..< 5 { #expect(responses[index] == Array("command \(index)".utf8.reversed())) }
        await client.close()
        await server.close()
        await serving.value
    }

    @Test func requestWithoutAnswerThrowsAfterItsTimeout() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 20)
        let client = Transport(link: left, options: TransportOptions.fastForTests)
        let server = Transport(link: right, options: TransportOptions.fastForTests)
        await #expect(throws: TransportError.responseTimedOut(requestID: 1)) {
            _ = try await client.request(Array("ping".utf8), timeout: .milliseconds(200))
        }
        await client.close()
        await server.close()
    }

    @Test func sendToAStalledReceiverWaitsAndCancellationEndsItWithATypedError() async throws {
        let (left, right) = MemoryLink.pair(maximumPacketSize: 244)
        var receiverOptions = TransportOptions.fastForTests
        receiverOptions.endpoint.maximumMessagesInProgress = 1
        let sender = Transport(link: left, options: TransportOptions.fastForTests)
        let receiver = Transport(link: right, options: receiverOptions)
        try await sender.send(payload(size: 1000, seed: 1))  // taken by nobody: the receiver is full
        let blocked = Task { try await sender.send(payload(size: 1000, seed: 2)) }
        // A third send waits as well and fails at its deadline with a typed error.
        await #expect(throws: TransportError.self) { try await sender.send([7], timeout: .milliseconds(300)) }
        blocked.cancel()
        await #expect(throws: TransportError.cancelled) { try await blocked.value }
        await sender.close()
        await receiver.close()
    }

    @Test func sendAfterCloseThrowsClosed() async {
        let (left, _) = MemoryLink.pair()
        let transport = Transport(link: left)
        await transport.close()
        await #expect(throws: TransportError.closed) { try await transport.send([1, 2, 3]) }
    }
}
