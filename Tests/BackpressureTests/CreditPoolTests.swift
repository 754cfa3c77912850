import Testing
@testable import Backpressure

@Suite("CreditPool")
struct CreditPoolTests {
    @Test func acquireWithinAvailableCreditsReturnsAtOnce() async throws {
        let pool = CreditPool(capacity: 8)
        try await pool.acquire(5)
        #expect(pool.available == 3)
        #expect(pool.tryAcquire(4) == false)
        #expect(pool.tryAcquire(3))
        #expect(pool.available == 0)
    }

    @Test func acquireSuspendsUntilEnoughCreditsAreReleased() async throws {
        var queued = Signal()
        let pool = CreditPool(capacity: 4, initial: 0, onWaiterQueued: queued.fire)
        let waiter = Task { try await pool.acquire(3) }
        await queued.wait()
        pool.release(2)
        #expect(pool.available == 2)
        #expect(pool.waitingCount == 1)
        pool.release(1)
        try await waiter.value
        #expect(pool.available == 0)
        #expect(pool.waitingCount == 0)
    }

    @Test func waitersAreServedInArrivalOrderAndSmallRequestsDoNotOvertake() async throws {
        var queued = Signal()
        let pool = CreditPool(capacity: 10, initial: 0, onWaiterQueued: queued.fire)
        let requests = [5, 1, 2, 1]
        var tasks: [Task<Void, any Error>] = []
        for count in requests {
            tasks.append(Task { try await pool.acquire(count) })
            await queued.wait()
        }
        // Credits are released one step at a time and each grant is awaited before the next
        // release, so the order observed is the pool's grant order, not the scheduler's.
        pool.release(4)  // enough for 1, 2 and 1 but not for the 5 at the head: nobody proceeds
        #expect(pool.waitingCount == 4)
        #expect(pool.available == 4)
        pool.release(1)  // 5: the head
        try await tasks[0].value
        #expect(pool.waitingCount == 3)
        #expect(pool.available == 0)
        pool.release(1)  // the 1
        try await tasks[1].value
        #expect(pool.waitingCount == 2)
        pool.release(1)  // one credit: the 2 waits and the 1 behind it does not overtake
        #expect(pool.waitingCount == 2)
        #expect(pool.available == 1)
        pool.release(1)  // the 2
        try await tasks[2].value
        #expect(pool.waitingCount == 1)
        #expect(pool.available == 0)
        pool.release(1)  // the last 1
        try await tasks[3].value
        #expect(pool.waitingCount == 0)
        #expect(pool.available == 0)
    }

    @Test func cancellingTheHeadWaiterLetsTheNextProceedAndKeepsCredits() async throws {
        var queued = Signal()
        let pool = CreditPool(capacity: 10, initial: 3, onWaiterQueued: queued.fire)
        let big = Task { try await pool.acquire(8) }
        await queued.wait()
        let small = Task { try await pool.acquire(2) }
        await queued.wait()
        big.cancel()
        await #expect(throws: CancellationError.self) { try await big.value }
        try await small.value
        #expect(pool.available == 1)
        #expect(pool.waitingCount == 0)
    }

    @Test func requestAboveCapacityOrNotPositiveThrows() async {
        let pool = CreditPool(capacity: 4)
        await #expect(throws: BackpressureError.creditRequestExceedsCapacity(requested: 5, capacity: 4)) {
            try await pool.acquire(5)
        }
        await #expect(throws: BackpressureError.invalidCreditCount(0)) { try await pool.acquire(0) }
    }

    @Test func releaseBeyondCapacityIsClamped() {
        let pool = CreditPool(capacity: 4)
        pool.release(100)
        #expect(pool.available == 4)
    }

    @Test func manyConcurrentTasksNeverOverdrawAndReturnEveryCredit() async throws {
        let pool = CreditPool(capacity: 16)
        let inUse = Shared((current: 0, peak: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<64 {
                group.addTask {
                    for round in 0..<50 {
                        let count = 1 + (task * 7 + round * 3) % 16
                        try await pool.acquire(count)
                        inUse.update { state in
                            state.current += count
                            state.peak = max(state.peak, state.current)
                        }
                        inUse.update { $0.current -= count }
                        pool.release(count)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(inUse.value.peak <= 16)
        #expect(pool.available == 16)
    }
}
