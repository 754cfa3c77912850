import Testing
@testable import Backpressure

/// What a live bearer needs beyond `send`: a non-waiting attempt, the isReady query, a wait for readiness,
/// and a terminal failure (the connection went away).
@Suite("ReadinessGate: trySend, isReady, waitUntilReady, fail")
struct ReadinessGateFailureTests {
    struct Gone: Error, Equatable { var reason: String }

    @Test func refusedTrySendMakesTheGateNotReadyUntilTheNextSignal() throws {
        let gate = ReadinessGate()
        let bearer = FakeBearer(freeSlots: 1)
        #expect(gate.isReady)
        #expect(try gate.trySend { bearer.trySend(1) })
        #expect(gate.isReady)
        #expect(try gate.trySend { bearer.trySend(2) } == false)
        #expect(gate.isReady == false)
        bearer.free(1)
        gate.signalReady()
        #expect(gate.isReady)
        #expect(try gate.trySend { bearer.trySend(2) })
        #expect(bearer.accepted == [1, 2])
    }

    @Test func trySendNeverOvertakesAQueuedSender() async throws {
        var refused = Signal()
        let gate = ReadinessGate()
        let bearer = FakeBearer(freeSlots: 0)
        let sender = startSender(1, gate: gate, bearer: bearer, refused: refused.fire)
        await refused.wait()
        bearer.free(1)
        // The slot is free, but sender 1 holds the turn: a non-waiting attempt must not take its slot.
        #expect(try gate.trySend { bearer.trySend(2) } == false)
        #expect(bearer.attempts == 1, "trySend did not even try")
        gate.signalReady()
        try await sender.value
        #expect(bearer.accepted == [1])
    }

    @Test func waitUntilReadyReturnsAtOnceWhenReadyAndAfterTheSignalOtherwise() async throws {
        let gate = ReadinessGate()
        try await gate.waitUntilReady()
        #expect(try gate.trySend { false } == false)
        let waiter = Task { try await gate.waitUntilReady() }
        while gate.waitingSenders == 0 { await Task.yield() }
        gate.signalReady()
        try await waiter.value
        #expect(gate.isReady)
    }

    @Test func cancelledWaitUntilReadyThrowsCancellation() async throws {
        let gate = ReadinessGate()
        #expect(try gate.trySend { false } == false)
        let waiter = Task { try await gate.waitUntilReady() }
        while gate.waitingSenders == 0 { await Task.yield() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(gate.waitingSenders == 0)
    }

    @Test func failWakesEveryWaitingSenderWithTheError() async throws {
        var queued = Signal()
        var refused = Signal()
        let gate = ReadinessGate(onSenderQueued: queued.fire)
        let bearer = FakeBearer(freeSlots: 0)
        var tasks: [Task<Void, any Error>] = []
        for packet in 0..<3 {
            tasks.append(startSender(packet, gate: gate, bearer: bearer, refused: refused.fire))
            if packet == 0 { await refused.wait() } else { await queued.wait() }
        }
        let readiness = Task { try await gate.waitUntilReady() }
        while gate.waitingSenders < 4 { await Task.yield() }
        gate.fail(Gone(reason: "reset"))
        for task in tasks { await #expect(throws: Gone(reason: "reset")) { try await task.value } }
        await #expect(throws: Gone(reason: "reset")) { try await readiness.value }
        #expect(gate.waitingSenders == 0)
        #expect(bearer.accepted.isEmpty)
        #expect(bearer.attempts == 1, "woken senders did not retry the bearer")
    }

    @Test func afterFailEverythingThrowsTheFirstFailureWithoutAttempting() async throws {
        let gate = ReadinessGate()
        let bearer = FakeBearer(freeSlots: 4)
        gate.fail(Gone(reason: "first"))
        gate.fail(Gone(reason: "second"))
        #expect(gate.isReady == false)
        #expect((gate.failure as? Gone) == Gone(reason: "first"))
        await #expect(throws: Gone(reason: "first")) { try await gate.send { bearer.trySend(1) } }
        #expect(throws: Gone(reason: "first")) { try gate.trySend { bearer.trySend(2) } }
        await #expect(throws: Gone(reason: "first")) { try await gate.waitUntilReady() }
        #expect(bearer.attempts == 0)
    }

    @Test func attemptRunsOnTheCallersActor() async throws {
        actor Counter {
            var count = 0
            let gate = ReadinessGate()
            func sendTwice() async throws {
                // The attempt touches actor state synchronously: only legal because it runs on this actor.
                try await gate.send {
                    count += 1
                    return true
                }
                try await gate.send {
                    count += 1
                    return true
                }
            }
        }
        let counter = Counter()
        try await counter.sendTwice()
        #expect(await counter.count == 2)
    }
}
