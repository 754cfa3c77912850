internal import DequeModule
import Synchronization

/// A bounded multi-producer, single-consumer async queue: `push` suspends while the queue holds `capacity`
/// elements, the consumer iterates it as an `AsyncSequence`. Nothing is ever dropped.
///
/// Pushers waiting for space are served in arrival order. `finish()` (or `finish(throwing:)`) lets the consumer
/// drain what is buffered and then ends the sequence (or throws); pushers waiting then throw
/// ``BackpressureError/queueFinished``. A cancelled pusher throws `CancellationError` and its element is not
/// enqueued; a cancelled consumer's `next()` returns nil without consuming anything.
public final class BoundedAsyncQueue<Element: Sendable, Failure: Error>: AsyncSequence, Sendable {
    private enum Termination {
        case open
        case finished(Failure?)
        case ended
    }

    private enum PushOutcome: Sendable {
        case enqueued
        case cancelled
        case finished
    }

    private enum NextOutcome: Sendable {
        case element(Element)
        case end
        case failure(Failure)
    }

    private struct State {
        var buffer: Deque<Element> = []
        var pushers = WaiterQueue<Element, PushOutcome>()
        var consumer: (id: UInt64, continuation: CheckedContinuation<NextOutcome, Never>)?
        var termination = Termination.open
        var nextWaiterID: UInt64 = 0

        mutating func makeWaiterID() -> UInt64 {
            nextWaiterID &+= 1
            return nextWaiterID
        }

        var isFinished: Bool {
            if case .open = termination { return false }
            return true
        }
    }

    /// The most elements the queue buffers (elements passed through ``pushIgnoringCapacity(_:)`` aside).
    public let capacity: Int
    private let state = Mutex(State())
    private let onWaiterQueued: (@Sendable () -> Void)?

    /// Creates an empty queue holding at most `capacity` elements (at least 1).
    public convenience init(capacity: Int) {
        self.init(capacity: capacity, onWaiterQueued: nil)
    }

    /// A queue that reports each pusher or consumer it suspends (tests use it to order tasks without polling).
    init(capacity: Int, onWaiterQueued: (@Sendable () -> Void)?) {
        self.capacity = Swift.max(1, capacity)
        self.onWaiterQueued = onWaiterQueued
    }

    /// Elements buffered now.
    public var count: Int { state.withLock { $0.buffer.count } }

    /// Producers suspended because the queue is full.
    public var waitingPushers: Int { state.withLock { $0.pushers.count } }

    /// Appends `element`, suspending while the queue is full. Throws ``BackpressureError/queueFinished`` if the
    /// queue is or gets finished, `CancellationError` if cancelled while waiting (the element is then not queued).
    public func push(_ element: Element) async throws {
        let id = state.withLock { $0.makeWaiterID() }
        let outcome = await suspend(id: id, cancelledValue: PushOutcome.cancelled) { continuation in
            let (outcome, consumer) = state.withLock { state -> (PushOutcome?, CheckedContinuation<NextOutcome, Never>?) in
                if state.isFinished { return (.finished, nil) }
                if state.pushers.isEmpty && state.buffer.count < capacity {
                    return (.enqueued, Self.deliver(element, in: &state))
                }
                if Task.isCancelled { return (.cancelled, nil) }
                state.pushers.append(id: id, payload: element, continuation: continuation)
                return (nil, nil)
            }
            consumer?.resume(returning: .element(element))
            if outcome == nil { onWaiterQueued?() }
            return outcome
        } cancel: { id in
            self.state.withLock { $0.pushers.remove(id: id)?.continuation }
        }
        switch outcome {
        case .enqueued: return
        case .cancelled: throw CancellationError()
        case .finished: throw BackpressureError.queueFinished
        }
    }

    /// Appends `element` if there is room now; returns false when full. Throws when the queue is finished.
    public func tryPush(_ element: Element) throws(BackpressureError) -> Bool {
        let (accepted, consumer) = try state.withLock {
            state throws(BackpressureError) -> (Bool, CheckedContinuation<NextOutcome, Never>?) in
            if state.isFinished { throw .queueFinished }
            guard state.pushers.isEmpty && state.buffer.count < capacity else { return (false, nil) }
            return (true, Self.deliver(element, in: &state))
        }
        consumer?.resume(returning: .element(element))
        return accepted
    }

    /// Appends `element` even when the queue is full. Only for rare control elements whose number the caller
    /// bounds (a link's connection changes), never for data.
    public func pushIgnoringCapacity(_ element: Element) throws(BackpressureError) {
        let consumer = try state.withLock {
            state throws(BackpressureError) -> CheckedContinuation<NextOutcome, Never>? in
            if state.isFinished { throw .queueFinished }
            return Self.deliver(element, in: &state)
        }
        consumer?.resume(returning: .element(element))
    }

    /// Ends the sequence after the buffered elements; with an error, the consumer gets it after them.
    public func finish(throwing error: Failure? = nil) {
        let (consumer, pushers) = state.withLock { state in
            guard case .open = state.termination else {
                return (CheckedContinuation<NextOutcome, Never>?.none, [WaiterQueue<Element, PushOutcome>.Waiter]())
            }
            state.termination = .finished(error)
            let consumer = state.consumer?.continuation
            state.consumer = nil
            if consumer != nil { state.termination = .ended }
            return (consumer, state.pushers.removeAll())
        }
        for pusher in pushers { pusher.continuation.resume(returning: .finished) }
        if let consumer {
            if let error { consumer.resume(returning: .failure(error)) } else { consumer.resume(returning: .end) }
        }
    }

    /// Hands `element` to the waiting consumer (returned, to resume outside the lock) or buffers it.
    private static func deliver(_ element: Element, in state: inout State) -> CheckedContinuation<NextOutcome, Never>? {
        if let consumer = state.consumer {
            state.consumer = nil
            return consumer.continuation
        }
        state.buffer.append(element)
        return nil
    }

    /// The next element in order (what the iterator's `next()` returns). Single consumer: a second consumer
    /// waiting at the same time gets nil.
    public func next() async throws(Failure) -> Element? {
        let id = state.withLock { $0.makeWaiterID() }
        let outcome = await suspend(id: id, cancelledValue: NextOutcome.end) { continuation in
            let (outcome, pusher) = state.withLock { state -> (NextOutcome?, CheckedContinuation<PushOutcome, Never>?) in
                if let element = state.buffer.popFirst() {
                    // Space freed: the longest-waiting pusher's element moves in, in order.
                    guard let pusher = state.pushers.popFirst() else { return (.element(element), nil) }
                    state.buffer.append(pusher.payload)
                    return (.element(element), pusher.continuation)
                }
                switch state.termination {
                case .open: break
                case let .finished(error):
                    state.termination = .ended
                    return (error.map(NextOutcome.failure) ?? .end, nil)
                case .ended: return (.end, nil)
                }
                if Task.isCancelled || state.consumer != nil { return (.end, nil) }
                state.consumer = (id, continuation)
                return (nil, nil)
            }
            pusher?.resume(returning: .enqueued)
            if outcome == nil { onWaiterQueued?() }
            return outcome
        } cancel: { id in
            self.state.withLock { state in
                guard let consumer = state.consumer, consumer.id == id else { return nil }
                state.consumer = nil
                return consumer.continuation
            }
        }
        switch outcome {
        case let .element(element): return element
        case .end: return nil
        case let .failure(error): throw error
        }
    }

    /// Iterates the queue; only one iterator may wait at a time (a second concurrent one gets nil).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: self) }

    /// The consumer's iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: BoundedAsyncQueue

        /// The next element, nil once the queue finished (or if the consumer task is cancelled).
        public mutating func next() async throws(Failure) -> Element? { try await queue.next() }

        /// The next element, nil once the queue finished (or if the consumer task is cancelled).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            try await queue.next()
        }
    }
}
