import BLELink
import Synchronization
import Testing

/// One LE connection creation at a time per adapter (``ConnectQueue``), against a controller that refuses a
/// second create while one is pending, as Linux's `hci_connect_le` does (EBUSY).
@Suite("the per-adapter connect queue")
struct ConnectQueueTests {
    enum CreateError: Error, Equatable {
        case busy
        case timedOut
    }

    /// A controller with one slot for a pending LE Create Connection.
    final class FakeController: Sendable {
        struct State {
            var pending = 0
            var mostPending = 0
            var busyAnswers = 0
            var started: [String] = []
            /// "start PEER" and "end PEER" in the order they happened.
            var events: [String] = []
        }

        let state = Mutex(State())
        let starts: AsyncStream<String>
        private let startsContinuation: AsyncStream<String>.Continuation

        init() { (starts, startsContinuation) = AsyncStream.makeStream(of: String.self) }

        /// One create for `peer`: EBUSY while another is pending; else pending until the peer answers after
        /// `answerAfter`, or, for a peer that never answers (nil), until `timeout` ends the attempt.
        func create(_ peer: String, answerAfter: Duration?, timeout: Duration) async throws(CreateError) {
            let busy = state.withLock { state -> Bool in
                if state.pending > 0 {
                    state.busyAnswers += 1
                    return true
                }
                state.pending += 1
                state.mostPending = max(state.mostPending, state.pending)
                state.started.append(peer)
                state.events.append("start \(peer)")
                return false
            }
            if busy { throw .busy }
            startsContinuation.yield(peer)
            defer {
                state.withLock { state in
                    state.pending -= 1
                    state.events.append("end \(peer)")
                }
            }
            if let answerAfter, answerAfter < timeout {
                try? await Task.sleep(for: answerAfter)
                return
            }
            try? await Task.sleep(for: timeout)
            throw .timedOut
        }
    }

    @Test("seven peers connecting at once never have two creates pending")
    func sevenPeersTakeTurns() async throws {
        let controller = FakeController()
        let queue = ConnectQueue()
        let results = await withTaskGroup(of: Result<Void, CreateError>?.self) { group in
            for peer in 0 ..< 7 {
                group.addTask {
                    do throws(CreateError) {
                        let ran: Void? = try await queue.run { () async throws(CreateError) in
                            try await controller.create("p\(peer)", answerAfter: .milliseconds(20), timeout: .seconds(5))
                        }
                        return ran == nil ? nil : .success(())
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 7)
        #expect(results.allSatisfy { if case .success? = $0 { true } else { false } }, "\(results)")
        let state = controller.state.withLock { $0 }
        #expect(state.busyAnswers == 0)
        #expect(state.mostPending == 1)
        #expect(Set(state.started).count == 7)
    }

    @Test("without the queue the fake answers EBUSY to overlapping creates")
    func theFakeRefusesOverlaps() async {
        let controller = FakeController()
        await withTaskGroup(of: Void.self) { group in
            for peer in 0 ..< 7 {
                group.addTask {
                    try? await controller.create("p\(peer)", answerAfter: .milliseconds(200), timeout: .seconds(5))
                }
            }
        }
        #expect(controller.state.withLock { $0.busyAnswers } > 0)
    }

    @Test("a peer that never answers holds the next one back only for its own attempt")
    func anAbsentPeerDoesNotBlockPastItsTimeout() async throws {
        let controller = FakeController()
        let queue = ConnectQueue()
        let attempt: Duration = .milliseconds(600)
        var starts = controller.starts.makeAsyncIterator()
        let absent = Task { () -> CreateError? in
            do throws(CreateError) {
                _ = try await queue.run { () async throws(CreateError) in
                    try await controller.create("absent", answerAfter: nil, timeout: attempt)
                }
                return nil
            } catch {
                return error
            }
        }
        #expect(await starts.next() == "absent")
        let queued = ContinuousClock.now
        let present = Task { () -> Duration? in
            do throws(CreateError) {
                _ = try await queue.run { () async throws(CreateError) in
                    try await controller.create("present", answerAfter: .milliseconds(10), timeout: .seconds(30))
                }
                return queued.duration(to: .now)
            } catch {
                return nil
            }
        }
        #expect(await absent.value == .timedOut)
        let waited = try #require(await present.value, "the present peer's create failed")
        // It waited for the absent peer's attempt (600 ms) and no longer: at half its own 30 s timeout, with
        // room for a loaded host's scheduling (6.5 s seen at load 20).
        #expect(waited < .seconds(15), "waited \(waited)")
        let state = controller.state.withLock { $0 }
        #expect(state.busyAnswers == 0)
        #expect(state.mostPending == 1)
        #expect(state.events == ["start absent", "end absent", "start present", "end present"])
    }

    @Test("a caller cancelled while it waits leaves the queue without running its attempt")
    func cancelledWhileWaiting() async {
        let queue = ConnectQueue()
        let (holding, held) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            _ = await queue.run { () async -> Void in
                held.yield()
                var iterator = released.makeAsyncIterator()
                _ = await iterator.next()
            }
        }
        var iterator = holding.makeAsyncIterator()
        _ = await iterator.next()
        let ran = Atomic<Bool>(false)
        let waiter = Task { await queue.run { () async -> Bool in ran.store(true, ordering: .relaxed); return true } }
        // Cancelling before or after it queued: either way it must not run.
        waiter.cancel()
        #expect(await waiter.value == nil)
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
        release.yield()
        await holder.value
        #expect(queue.waiting == 0)
        #expect(await queue.run { () async -> Int in 7 } == 7)
    }

    @Test("one queue per adapter name, shared by every caller")
    func sharedPerAdapter() {
        #expect(ConnectQueue.shared(for: "hci7") === ConnectQueue.shared(for: "hci7"))
        #expect(ConnectQueue.shared(for: "hci7") !== ConnectQueue.shared(for: "hci8"))
    }
}
