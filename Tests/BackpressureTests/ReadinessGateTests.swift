import Testing
@testable import Backpressure

@Suite("ReadinessGate")
struct ReadinessGateTests {
    @Test func acceptedAttemptReturnsAtOnce() async throws {
        let gate = ReadinessGate()
        let bearer = FakeBearer(freeSlots: 1)
        try await gate.send { bearer.trySend(1) }
        #expect(bearer.accepted == [1])
        #expect(bearer.attempts == 1)
    }

    @Test func refusedSendResumesWithTheSamePacketAfterReady() async throws {
        let gate = ReadinessGate()
        let bearer = FakeBearer(freeSlots: 0)
        var refused = Signal()
        let sender = startSender(42, gate: gate, bearer: bearer, refused: refused.fire)
        await refused.wait()
        #expect(bearer.accepted.isEmpty)
        bearer.free(1)
        gate.signalReady()
        try await sender.value
        #expect(bearer.accepted == [42])
        #expect(bearer.attempts == 2)
    }

    @Test func readySignalledBetweenRefusalAndSuspensionIsNotLost() async throws {
        // The worst interleaving, forced on every iteration: the bearer becomes ready and signals after the
        // attempt decided "full" but before the sender suspended. A lost wake-up would hang here.
        let gate = ReadinessGate()
        for round in 0..<2_000 {
            let bearer = FakeBearer(freeSlots: 0)
            try await gate.send {
                if bearer.trySend(round) { return true }
                bearer.free(1)
                gate.signalReady()
                return false
            }
            #expect(bearer.accepted == [round])
        }
    }

    @Test func concurrentReadyRacingTheSenderNeverLosesTheWakeUp() async throws {
        let gate = ReadinessGate()
        for round in 0..<1_000 {
            let bearer = FakeBearer(freeSlots: 0)
            async let sent: Void = gate.send { bearer.trySend(round) }
            async let readied: Void = {
                bearer.free(1)
                gate.signalReady()
            }()
            try await sent
            await readied
            #expect(bearer.accepted == [round])
        }
    }

    @Test(arguments: [2, 8, 64])
    func concurrentSendersLeaveInArrivalOrder(senders: Int) async throws {
        var queued = Signal()
        var refused = Signal()
        let gate = ReadinessGate(onSenderQueued: queued.fire)
        let bearer = FakeBearer(freeSlots: 0)
        var tasks: [Task<Void, any Error>] = []
        for sender in 0..<senders {
            tasks.append(startSender(sender, gate: gate, bearer: bearer, refused: refused.fire))
            // Sender 0 holds the turn and is refused; every later one queues behind it.
            if sender == 0 { await refused.wait() } else { await queued.wait() }
        }
        for _ in 0..<senders {
            bearer.free(1)
            gate.signalReady()
        }
        for task in tasks { try await task.value }
        #expect(bearer.accepted == Array(0..<senders))
        #expect(gate.waitingSenders == 0)
    }

    @Test func cancelledWaitingSenderThrowsAndDoesNotConsumeTheNextReady() async throws {
        var queued = Signal()
        var refused = Signal()
        let gate = ReadinessGate(onSenderQueued: queued.fire)
        let bearer = FakeBearer(freeSlots: 0)
        let first = startSender(1, gate: gate, bearer: bearer, refused: refused.fire)
        await refused.wait()
        let second = startSender(2, gate: gate, bearer: bearer, refused: refused.fire)
        await queued.wait()

        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        await refused.wait()  // the second sender took the turn and was refused
        bearer.free(1)
        gate.signalReady()  // exactly one ready: it must reach the second sender
        try await second.value
        #expect(bearer.accepted == [2])
        #expect(gate.waitingSenders == 0)
    }

    @Test func cancelledQueuedSenderIsRemovedAndOthersKeepTheirOrder() async throws {
        var queued = Signal()
        var refused = Signal()
        let gate = ReadinessGate(onSenderQueued: queued.fire)
        let bearer = FakeBearer(freeSlots: 0)
        var tasks: [Task<Void, any Error>] = []
        for packet in 0..<4 {
            tasks.append(startSender(packet, gate: gate, bearer: bearer, refused: refused.fire))
            if packet == 0 { await refused.wait() } else { await queued.wait() }
        }
        tasks[2].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[2].value }
        #expect(gate.waitingSenders == 3)
        bearer.free(3)
        gate.signalReady()
        for index in [0, 1, 3] { try await tasks[index].value }
        #expect(bearer.accepted == [0, 1, 3])
    }

    @Test func errorFromTheAttemptEndsTheSendAndPassesTheTurn() async throws {
        struct Disconnected: Error {}
        let gate = ReadinessGate()
        await #expect(throws: Disconnected.self) { try await gate.send { throw Disconnected() } }
        let bearer = FakeBearer(freeSlots: 1)
        try await gate.send { bearer.trySend(7) }
        #expect(bearer.accepted == [7])
    }

    @Test func alreadyCancelledSenderThrowsWithoutAttempting() async {
        let gate = ReadinessGate()
        let bearer = FakeBearer(freeSlots: 1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await gate.send { bearer.trySend(1) }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(bearer.attempts == 0)
    }
}
