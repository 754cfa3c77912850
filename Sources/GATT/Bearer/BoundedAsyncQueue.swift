import DequeModule
import Synchronization

/// A bounded, backpressured async queue: producers suspend while `capacity` elements wait, a single consumer
/// iterates. Nothing is ever dropped. Minimal internal stand-in for the Backpressure module's queue.
public final class BoundedAsyncQueue<Element: Sendable>: AsyncSequence, Sendable {
    private struct State {
        var elements: Deque<Element> = []
        var consumer: CheckedContinuation<Element?, Never>?
        /// Producers waiting for room; resumed with `.success(false)` to retry.
        var producers: Deque<(id: UInt64, continuation: CheckedContinuation<Result<Bool, ATTError>, Never>)> = []
        var nextID: UInt64 = 0
        var finished = false
    }

    private enum Step {
        case delivered(CheckedContinuation<Element?, Never>)
        case queued
        case wait
        case fail(ATTError)
    }

    private let capacity: Int
    private let state = Mutex(State())

    public init(capacity: Int) { self.capacity = Swift.max(1, capacity) }

    /// Appends `element`, suspending while the queue is full; throws ``ATTError/closed`` once finished and
    /// ``ATTError/cancelled`` if cancelled while waiting (the element was then not queued).
    public func send(_ element: Element) async throws(ATTError) {
        while true {
            let id = state.withLock { state in
                defer { state.nextID += 1 }
                return state.nextID
            }
            let result: Result<Bool, ATTError> = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Result<Bool, ATTError>, Never>) in
                    let step: Step = state.withLock { state in
                        if state.finished { return .fail(.closed) }
                        if let consumer = state.consumer.take() { return .delivered(consumer) }
                        if state.elements.count < capacity {
                            state.elements.append(element)
                            return .queued
                        }
                        if Task.isCancelled { return .fail(.cancelled) }
                        state.producers.append((id, continuation))
                        return .wait
                    }
                    switch step {
                    case let .delivered(consumer):
                        consumer.resume(returning: element)
                        continuation.resume(returning: .success(true))
                    case .queued: continuation.resume(returning: .success(true))
                    case .wait: break
                    case let .fail(error): continuation.resume(returning: .failure(error))
                    }
                }
            } onCancel: {
                let producer = state.withLock { state in
                    state.producers.firstIndex { $0.id == id }.map { state.producers.remove(at: $0) }
                }
                producer?.continuation.resume(returning: .failure(.cancelled))
            }
            if try result.get() { return }
        }
    }

    /// The next element in order; nil once finished and drained, or when the consumer task is cancelled.
    public func next() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let (immediate, producer): (Element??, CheckedContinuation<Result<Bool, ATTError>, Never>?) =
                    state.withLock { state in
                        if let element = state.elements.popFirst() {
                            return (.some(element), state.producers.popFirst()?.continuation)
                        }
                        if state.finished || Task.isCancelled { return (.some(nil), nil) }
                        state.consumer = continuation
                        return (nil, state.producers.popFirst()?.continuation)
                    }
                producer?.resume(returning: .success(false))
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            state.withLock { $0.consumer.take() }?.resume(returning: nil)
        }
    }

    /// No more elements: waiting producers fail with ``ATTError/closed``; the consumer drains what is queued.
    public func finish() {
        let (consumer, producers) = state.withLock { state in
            state.finished = true
            defer { state.producers.removeAll() }
            return (state.elements.isEmpty ? state.consumer.take() : nil, state.producers.map(\.continuation))
        }
        consumer?.resume(returning: nil)
        for producer in producers { producer.resume(returning: .failure(.closed)) }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: BoundedAsyncQueue
        public mutating func next() async -> Element? { await queue.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: self) }
}
