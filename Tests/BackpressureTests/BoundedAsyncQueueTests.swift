import Testing
@testable import Backpressure

@Suite("BoundedAsyncQueue")
struct BoundedAsyncQueueTests {
    struct Failed: Error, Equatable {}

    @Test func elementsComeOutInPushOrderAndFinishEndsTheSequence() async throws {
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 4)
        for value in 1...3 { try await queue.push(value) }
        queue.finish()
        var received: [Int] = []
        for await value in queue { received.append(value) }
        #expect(received == [1, 2, 3])
    }

    @Test func tryPushRefusesWhenFullAndPushIgnoringCapacityDoesNot() throws {
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 2)
        #expect(try queue.tryPush(1))
        #expect(try queue.tryPush(2))
        #expect(try queue.tryPush(3) == false)
        try queue.pushIgnoringCapacity(4)
        #expect(queue.count == 3)
    }

    @Test func pushSuspendsWhileFullAndResumesWhenTheConsumerTakesOne() async throws {
        var queued = Signal()
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 1, onWaiterQueued: queued.fire)
        try await queue.push(1)
        let pusher = Task { try await queue.push(2) }
        await queued.wait()
        #expect(queue.count == 1)
        var iterator = queue.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        try await pusher.value
        #expect(queue.count == 1)
        #expect(await iterator.next() == 2)
    }

    @Test(arguments: [1, 3, 16])
    func manyProducersNeverExceedCapacityAndLoseNothing(capacity: Int) async throws {
        let queue = BoundedAsyncQueue<Int, Never>(capacity: capacity)
        let producers = 8
        let perProducer = 500
        let peak = Shared(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for producer in 0..<producers {
                group.addTask {
                    for index in 0..<perProducer { try await queue.push(producer * perProducer + index) }
                }
            }
            var lastPerProducer = [Int](repeating: -1, count: producers)
            var received = 0
            for await value in queue {
                peak.update { $0 = max($0, queue.count) }
                let producer = value / perProducer
                #expect(value > lastPerProducer[producer], "producer \(producer) out of order")
                lastPerProducer[producer] = value
                received += 1
                if received == producers * perProducer { break }
            }
            try await group.waitForAll()
            #expect(received == producers * perProducer)
        }
        #expect(peak.value <= capacity)
    }

    @Test func waitingPushersAreServedInArrivalOrder() async throws {
        var queued = Signal()
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 1, onWaiterQueued: queued.fire)
        try await queue.push(0)
        var pushers: [Task<Void, any Error>] = []
        for value in 1...5 {
            pushers.append(Task { try await queue.push(value) })
            await queued.wait()
        }
        var received: [Int] = []
        var iterator = queue.makeAsyncIterator()
        for _ in 0...5 { received.append(await iterator.next() ?? -1) }
        for pusher in pushers { try await pusher.value }
        #expect(received == [0, 1, 2, 3, 4, 5])
    }

    @Test func cancelledPusherThrowsAndItsElementIsNotQueued() async throws {
        var queued = Signal()
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 1, onWaiterQueued: queued.fire)
        try await queue.push(1)
        let cancelled = Task { try await queue.push(2) }
        await queued.wait()
        let kept = Task { try await queue.push(3) }
        await queued.wait()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        var iterator = queue.makeAsyncIterator()
        #expect(await iterator.next() == 1)  // room for one: the kept pusher's element moves in
        try await kept.value
        #expect(await iterator.next() == 3)
        #expect(queue.count == 0)
    }

    @Test func finishFailsWaitingPushersAndLaterPushes() async throws {
        var queued = Signal()
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 1, onWaiterQueued: queued.fire)
        try await queue.push(1)
        let waiting = Task { try await queue.push(2) }
        await queued.wait()
        queue.finish()
        await #expect(throws: BackpressureError.queueFinished) { try await waiting.value }
        await #expect(throws: BackpressureError.queueFinished) { try await queue.push(3) }
        #expect(throws: BackpressureError.queueFinished) { try queue.tryPush(3) }
        var iterator = queue.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
    }

    @Test func finishWithErrorThrowsAfterTheBufferedElements() async throws {
        let queue = BoundedAsyncQueue<Int, Failed>(capacity: 4)
        try await queue.push(1)
        queue.finish(throwing: Failed())
        var iterator = queue.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        await #expect(throws: Failed()) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test func waitingConsumerIsWokenByFinish() async throws {
        var queued = Signal()
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 1, onWaiterQueued: queued.fire)
        let consumer = Task {
            var iterator = queue.makeAsyncIterator()
            return await iterator.next()
        }
        await queued.wait()
        queue.finish()
        #expect(await consumer.value == nil)
    }

    @Test func cancelledConsumerGetsNilAndConsumesNothing() async throws {
        var queued = Signal()
        let queue = BoundedAsyncQueue<Int, Never>(capacity: 2, onWaiterQueued: queued.fire)
        let consumer = Task {
            var iterator = queue.makeAsyncIterator()
            return await iterator.next()
        }
        await queued.wait()
        consumer.cancel()
        #expect(await consumer.value == nil)
        try await queue.push(9)
        var iterator = queue.makeAsyncIterator()
        #expect(await iterator.next() == 9)
    }
}
