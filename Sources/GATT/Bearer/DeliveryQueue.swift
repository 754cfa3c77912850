import Backpressure

/// The GATT layer's delivery queues (server events, client notifications, a link's events) are Backpressure's
/// bounded queue: a consumer that stops reading stops the reader, and so the bearer; nothing is dropped.
extension BoundedAsyncQueue where Failure == Never {
    /// Appends `element`, suspending while the queue is full. Throws ``ATTError/closed`` once the queue is
    /// finished and ``ATTError/cancelled`` if cancelled while waiting (the element was then not queued).
    func send(_ element: Element) async throws(ATTError) {
        do {
            try await push(element)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .closed
        }
    }
}
