extension MessagePipe {
    /// How many messages, and bytes of messages, ``send(count:window:deadline:body:onAcknowledged:)`` keeps in
    /// flight at once (at least one message, whatever its size).
    public struct SendWindow: Sendable, Equatable {
        /// The most messages submitted and not yet acknowledged.
        public var messages: Int
        /// The most bytes of such messages.
        public var bytes: Int

        /// The defaults keep a receiver's group commit busy while the sender's memory stays bounded.
        public init(messages: Int = 32, bytes: Int = 4 << 20) {
            self.messages = messages
            self.bytes = bytes
        }
    }

    /// How a windowed send ended: how many messages the peer acknowledged, in order, and the first failure.
    public struct WindowOutcome: Sendable {
        /// What ended the send early.
        public enum Failure: Sendable {
            /// `body` threw for message `index`; every message before it was settled first.
            case body(index: Int, error: any Error)
            /// Message `index` could not be submitted or was not acknowledged (`TransportError`,
            /// `MessagePipeError`, `SecureError`, as `send(_:timeout:)` throws).
            case send(index: Int, error: any Error)
        }

        /// Messages acknowledged before the failure (`count` when there was none).
        public let acknowledged: Int
        /// nil: every message was acknowledged.
        public let failure: Failure?
    }

    /// Sends messages `0..<count` in order, the body of each asked of `body` only when it is its turn, with up to
    /// `window` in flight at once (queued in order; the oldest is settled before more are submitted). Stops at
    /// the first failure, after settling what is already in flight (an earlier message's failure wins). Each
    /// submit gets the time left until `deadline` (nil: no limit); once it passed, the next submit fails with
    /// `TransportError.deadlineExceeded`. `onAcknowledged` hears each acknowledged message's index, size and
    /// the time since it was submitted, in order. Never throws: the outcome says what happened.
    ///
    /// ```swift
    /// let outcome = await pipe.send(count: readings.count) { readings[$0] }
    /// if let failure = outcome.failure { print("stopped after \(outcome.acknowledged): \(failure)") }
    /// ```
    public func send(
        count: Int, window: SendWindow = SendWindow(), deadline: ContinuousClock.Instant? = nil,
        body: (Int) throws -> [UInt8],
        onAcknowledged: (_ index: Int, _ bytes: Int, _ elapsed: Duration) -> Void = { _, _, _ in }
    ) async -> WindowOutcome {
        var inFlight: [(index: Int, bytes: Int, started: ContinuousClock.Instant, receipt: SendReceipt)] = []
        var inFlightBytes = 0
        /// Waits for the oldest message in flight; its failure ends the send.
        func settleOldest() async -> WindowOutcome? {
            let head = inFlight.removeFirst()
            inFlightBytes -= head.bytes
            do {
                try await head.receipt.acknowledged()
            } catch {
                return WindowOutcome(acknowledged: head.index, failure: .send(index: head.index, error: error))
            }
            onAcknowledged(head.index, head.bytes, head.started.duration(to: .now))
            return nil
        }
        /// Settles everything in flight; the first failure among them, if any.
        func settleAll() async -> WindowOutcome? {
            while !inFlight.isEmpty { if let failure = await settleOldest() { return failure } }
            return nil
        }
        for index in 0..<count {
            let message: [UInt8]
            do {
                message = try body(index)
            } catch {
                return await settleAll() ?? WindowOutcome(acknowledged: index, failure: .body(index: index, error: error))
            }
            while !inFlight.isEmpty, inFlight.count >= window.messages || inFlightBytes + message.count > window.bytes {
                if let failure = await settleOldest() { return failure }
            }
            let started = ContinuousClock.now
            do {
                let receipt = try await submit(message, timeout: try Self.timeLeft(until: deadline))
                inFlight.append((index, message.count, started, receipt))
                inFlightBytes += message.count
            } catch {
                return await settleAll() ?? WindowOutcome(acknowledged: index, failure: .send(index: index, error: error))
            }
        }
        return await settleAll() ?? WindowOutcome(acknowledged: count, failure: nil)
    }

    /// The time left until `deadline` (nil: none); throws once it passed.
    private static func timeLeft(until deadline: ContinuousClock.Instant?) throws(TransportError) -> Duration? {
        guard let deadline else { return nil }
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { throw .deadlineExceeded(messageID: nil) }
        return left
    }
}
