public import Logging
import Backpressure

/// Whole messages over any ``Link``, reliably: acknowledged sends, exactly-once in-order delivery,
/// request/response, resume after reconnect (PROTOCOL.md section 3).
///
/// One driver task per link feeds link events into a ``TransportEndpoint``, writes what it produces
/// (suspending while the link is not ready) and fires its timers on the clock, sleeping in between.
///
/// ```swift
/// let transport = Transport(link: link)           // any Link, e.g. a connected GATTLink
/// try await transport.send(Array("hello".utf8))   // returns once the peer acknowledged it
/// for await message in transport.messages { print(message.body) }
/// await transport.close()
/// ```
public actor Transport {
    private var endpoint: TransportEndpoint
    private let options: TransportOptions
    private let clock: TransportClock
    private let logger: Logger?
    private let closeLink: @Sendable () async -> Void
    /// ``EndpointEvent/peerSilent`` asks the driver's renewal task to call ``Link/renewIncoming()`` (at most one
    /// request waits while a renewal runs).
    private let renewalRequests: AsyncStream<Void>.Continuation
    private let renewals: AsyncStream<Void>
    private var driver: Task<Void, Never>?
    private var closed = false

    private var buffer: [UInt8] = []
    private var writerWaiter: CheckedContinuation<[UInt8]?, Never>?
    /// The timer loop, when no timeout is due: resumed once one is.
    private var timerWaiter: CheckedContinuation<Void, Never>?
    /// The timer loop's sleep until `timerSleepsUntil`: cancelled when an earlier timeout appears or on close.
    private var timerSleep: Task<Void, Never>?
    private var timerSleepsUntil: Duration?
    private var messageWaiter: CheckedContinuation<ReceivedMessage?, Never>?
    /// A packet taken from the endpoint is with the write loop, not yet handed to the link.
    private var writing = false
    /// ``flush(within:)`` callers, each resumed once the endpoint owes the peer nothing and no packet is being
    /// written (true), or at its timeout or the close (false).
    private var flushWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var nextFlushWaiter = 0
    /// Submissions wait here, in order, while the endpoint has no room; each room change signals it.
    private let submitGate = ReadinessGate()
    /// With ``TransportOptions/sequentialRequests``: one request in flight, the others take turns for it.
    private let requestCredit = CreditPool(capacity: 1)
    private var pending: [SubmissionID: Pending] = [:]
    /// ``EndpointEvent/peerSessionChanged`` events so far, and who waits for the next one.
    private var peerSessionChangeCount = 0
    private var peerSessionWaiters: [CheckedContinuation<Int?, Never>] = []
    /// Submissions nobody waits for yet (a ``submit(_:compress:timeout:)`` receipt not awaited, or a send between
    /// queueing and waiting): their outcome is kept here until a waiter takes it, so none is lost.
    private var unclaimed: [SubmissionID: Unclaimed] = [:]

    private struct Unclaimed {
        var isRequest: Bool
        var outcome: Result<[UInt8], any Error>?
    }

    private struct Pending {
        var continuation: CheckedContinuation<[UInt8], any Error>
        var isRequest: Bool
    }

    /// Starts a transport over `link`; it runs until ``close()`` or until the link's events finish.
    public init<L: Link>(
        link: L, options: TransportOptions = TransportOptions(), clock: some Clock<Duration> = ContinuousClock(),
        logger: Logger? = nil
    ) {
        endpoint = options.senderSession.map { TransportEndpoint(configuration: options.endpoint, resuming: $0) }
            ?? TransportEndpoint(configuration: options.endpoint)
        self.options = options
        self.clock = TransportClock(clock)
        self.logger = logger
        closeLink = { await link.close() }
        (renewals, renewalRequests) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let events = link.events
        let send: @Sendable ([UInt8]) async throws -> Void = { try await link.send($0) }
        let renew: @Sendable () async -> Void = { await link.renewIncoming() }
        driver = nil
        Task { await self.startDriver(events: events, send: send, renew: renew) }
    }

    private func startDriver<Events: AsyncSequence<LinkEvent, Never> & Sendable>(
        events: Events, send: @escaping @Sendable ([UInt8]) async throws -> Void,
        renew: @escaping @Sendable () async -> Void
    ) {
        guard !closed, driver == nil else { return }
        driver = Task { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events { await self.handle(event) }
                    await self.close()
                }
                group.addTask { await self.writeLoop(send: send) }
                group.addTask { await self.timerLoop() }
                group.addTask { [renewals, logger] in
                    for await _ in renewals {
                        logger?.debug("the peer is silent: asking the link to renew its incoming path")
                        await renew()
                    }
                }
                await group.waitForAll()
            }
        }
    }

    // MARK: Public API

    /// Sends `message` and returns when the peer has acknowledged all of it.
    ///
    /// Throws ``TransportError`` after the retries or the `timeout`, ``TransportError/cancelled`` when the
    /// calling task is cancelled (the message is then withdrawn at the peer), ``TransportError/closed``.
    public func send(_ message: [UInt8], compress: Bool = false, timeout: Duration? = nil) async throws {
        _ = try await submitAndWait(message, kind: .message, compress: compress, timeout: timeout)
    }

    /// Queues `message` and returns once it is queued, before the peer acknowledged it: the messages one task
    /// submits go in call order, so several can be in flight at once. Await each receipt's
    /// ``SendReceipt/acknowledged()`` (its outcome is kept until then); errors as for ``send(_:compress:timeout:)``.
    /// Waits while the send queue is full (``EndpointConfiguration/maximumQueuedMessages``).
    ///
    /// ```swift
    /// var receipts: [SendReceipt] = []
    /// for message in messages { receipts.append(try await transport.submit(message)) }
    /// for receipt in receipts { try await receipt.acknowledged() }
    /// ```
    public func submit(_ message: [UInt8], compress: Bool = false, timeout: Duration? = nil) async throws -> SendReceipt {
        let id = try await enqueue(message, kind: .message, compress: compress, timeout: timeout)
        return SendReceipt { _ = try await self.wait(for: id) }
    }

    /// Sends a request and returns the body of the peer's response, or throws after `timeout`
    /// (``TransportError/responseTimedOut(requestID:)`` when the request arrived but no response came).
    public func request(_ message: [UInt8], compress: Bool = false, timeout: Duration) async throws -> [UInt8] {
        if options.sequentialRequests { try await enterRequestGate() }
        defer { if options.sequentialRequests { leaveRequestGate() } }
        return try await submitAndWait(message, kind: .request, compress: compress, timeout: timeout)
    }

    /// Answers `request` (a message with ``ReceivedMessage/isRequest``) with `response`.
    public func respond(to request: ReceivedMessage, with response: [UInt8], compress: Bool = false) async throws {
        _ = try await submitAndWait(
            response, kind: .response(to: request.messageID), compress: compress, timeout: nil)
    }

    /// Serves requests one at a time, in arrival order, until the transport closes; other messages are
    /// passed to `other`. The handler's error is logged and answered with an empty response.
    public func serveRequests(
        other: @Sendable (ReceivedMessage) async -> Void = { _ in },
        _ handler: @Sendable (ReceivedMessage) async throws -> [UInt8]
    ) async {
        for await message in messages {
            guard message.isRequest else {
                await other(message)
                continue
            }
            let response: [UInt8]
            do {
                response = try await handler(message)
            } catch {
                logger?.warning("request handler failed", metadata: ["request": "\(message.messageID)"])
                response = []
            }
            do {
                try await respond(to: message, with: response)
            } catch {
                logger?.warning("response not delivered: \(error)")
            }
        }
    }

    /// The messages the peer sends, each exactly once, in its order. Backpressured: while nobody reads,
    /// the peer's sends wait. Single consumer; finishes when the transport closes.
    public nonisolated var messages: Messages { Messages(transport: self) }

    /// Returns once every answer this transport owes its peer as receiver (the acknowledgement of each message
    /// accepted, a rejection, an answer to a query) was handed to the link, or after `timeout` on the
    /// transport's clock, or when it closed. True when nothing was left. A link that is down or not ready
    /// holds them: that is what the timeout bounds. Sends of messages are not waited for.
    public func flush(within timeout: Duration) async -> Bool {
        if isFlushed { return true }
        guard !closed else { return false }
        let id = nextFlushWaiter
        nextFlushWaiter += 1
        let deadline = clock.now() + timeout
        let sleepUntil = clock.sleepUntil
        let timer = Task { [weak self] in
            do { try await sleepUntil(deadline) } catch { return }
            await self?.endFlush(id, flushed: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            flushWaiters[id] = continuation
        }
    }

    /// Closes as ``close()`` does once ``flush(within:)`` returned: a receiver that ends after accepting its last
    /// messages lets their acknowledgements reach the link first, waiting at most `timeout` for it.
    ///
    /// ```swift
    /// await transport.accept(last)
    /// await transport.close(flushingWithin: .seconds(2))   // the peer's send of `last` completes
    /// ```
    public func close(flushingWithin timeout: Duration) async {
        _ = await flush(within: timeout)
        await close()
    }

    private var isFlushed: Bool { !writing && !endpoint.owesPeer }

    private func endFlush(_ id: Int, flushed: Bool) {
        flushWaiters.removeValue(forKey: id)?.resume(returning: flushed)
    }

    /// Resumes the flush waiters once nothing is owed (or with false once closed).
    private func settleFlushWaiters() {
        guard !flushWaiters.isEmpty, closed || isFlushed else { return }
        let flushed = !closed
        let waiters = flushWaiters
        flushWaiters = [:]
        for (_, waiter) in waiters { waiter.resume(returning: flushed) }
    }

    /// Closes the transport and its link at once: pending operations throw ``TransportError/closed``, and what
    /// is not yet written is dropped (``close(flushingWithin:)`` writes the peer's acknowledgements first).
    public func close() async {
        guard !closed else { return }
        closed = true
        logger?.debug("transport closing")
        for (_, entry) in pending { entry.continuation.resume(throwing: TransportError.closed) }
        pending.removeAll()
        for (id, entry) in unclaimed where entry.outcome == nil { unclaimed[id]?.outcome = .failure(TransportError.closed) }
        // Waiting submissions throw `closed`; a request waiting for its turn gets it once the one in flight
        // (failed with `closed` above) leaves, and then finds the transport closed.
        submitGate.fail(TransportError.closed)
        messageWaiter?.resume(returning: nil)
        messageWaiter = nil
        writerWaiter?.resume(returning: nil)
        writerWaiter = nil
        timerWaiter?.resume()
        timerWaiter = nil
        timerSleep?.cancel()
        renewalRequests.finish()
        let waiters = peerSessionWaiters
        peerSessionWaiters = []
        for waiter in waiters { waiter.resume(returning: nil) }
        settleFlushWaiters()
        driver?.cancel()
        await closeLink()
    }

    // MARK: Submission

    private func submitAndWait(
        _ body: [UInt8], kind: MessageKind, compress: Bool, timeout: Duration?
    ) async throws -> [UInt8] {
        let id = try await enqueue(body, kind: kind, compress: compress, timeout: timeout)
        return try await wait(for: id)
    }

    /// Queues `body`, waiting while the endpoint has no room; the submissions of one task go in call order.
    /// Its outcome is kept from here until ``wait(for:)`` takes it.
    private func enqueue(
        _ body: [UInt8], kind: MessageKind, compress: Bool, timeout: Duration?
    ) async throws -> SubmissionID {
        guard !closed else { throw TransportError.closed }
        let deadline = timeout.map { clock.now() + $0 }
        let options = SendOptions(kind: kind, compress: compress, deadline: deadline)
        var submitted: SubmissionID?
        do {
            // Refused while the endpoint has no room; `afterChange` signals every change that may make some.
            try await submitGate.send {
                guard endpoint.canSubmit else { return false }
                submitted = try endpoint.submit(body, options: options, now: clock.now())
                return true
            }
        } catch is CancellationError {
            throw TransportError.cancelled
        }
        guard let id = submitted else { throw TransportError.closed }
        unclaimed[id] = Unclaimed(isRequest: kind == .request, outcome: nil)
        afterChange()
        return id
    }

    /// Waits for the outcome of submission `id` (taking it at once when it came already); cancelling the waiting
    /// task cancels the message. A second wait for the same submission throws ``TransportError/closed``.
    private func wait(for id: SubmissionID) async throws -> [UInt8] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                guard let entry = unclaimed.removeValue(forKey: id) else {
                    continuation.resume(throwing: TransportError.closed)
                    return
                }
                if let outcome = entry.outcome {
                    continuation.resume(with: outcome)
                } else if closed {
                    continuation.resume(throwing: TransportError.closed)
                } else if Task.isCancelled {
                    continuation.resume(throwing: TransportError.cancelled)
                    endpoint.cancel(id, error: .cancelled, now: clock.now())
                    afterChange()
                } else {
                    pending[id] = Pending(continuation: continuation, isRequest: entry.isRequest)
                }
            }
        } onCancel: {
            Task { await self.cancelSubmission(id) }
        }
    }

    private func cancelSubmission(_ id: SubmissionID) {
        guard pending[id] != nil else { return }
        endpoint.cancel(id, error: .cancelled, now: clock.now())
        afterChange()
    }

    private func enterRequestGate() async throws {
        do { try await requestCredit.acquire() } catch { throw TransportError.cancelled }
        guard !closed else {
            requestCredit.release()
            throw TransportError.closed
        }
    }

    private func leaveRequestGate() { requestCredit.release() }

    // MARK: Receiving

    /// With ``EndpointConfiguration/holdsAcknowledgements``: `message` is accepted, so the peer's `send` of it
    /// completes now; until then the peer waits. A message never accepted is never acknowledged.
    /// ```swift
    /// var options = TransportOptions()
    /// options.endpoint.holdsAcknowledgements = true
    /// let transport = Transport(link: link, options: options)
    /// for await message in transport.messages {
    ///     try await store(message.body)          // e.g. publish and wait for the broker's PUBACK
    ///     await transport.accept(message)        // the peer learns `complete` only now
    /// }
    /// ```
    public func accept(_ message: ReceivedMessage) {
        endpoint.accept(message)
        afterChange()
    }

    /// With ``EndpointConfiguration/holdsAcknowledgements``: refuses `message` for good; the peer's `send` of
    /// it fails with ``TransportError/rejectedByPeer(messageID:reason:)``. The rejection goes out with the next
    /// packets this transport writes (close it only after the peer had a moment to read it).
    public func reject(_ message: ReceivedMessage, reason: RejectionReason) {
        endpoint.reject(message, reason: reason)
        afterChange()
    }

    /// The peer's sender session, from its latest `hello` (PROTOCOL.md 3.9); nil before the first. Each message
    /// received names it (``ReceivedMessage/senderSession``).
    public var peerSession: UInt64? { endpoint.peerSession }

    /// How often the peer's sender session changed under this transport so far: a hello named another session
    /// than the one before (a peer that restarted, or forgot this side's session, while this side resumed its
    /// own). What the peer held of this side is gone then; a layer above that keeps state with it (an
    /// end-to-end session) starts it again.
    public var peerSessionChanges: Int { peerSessionChangeCount }

    /// Returns once ``peerSessionChanges`` exceeds `seen` (with the count then), or nil once the transport closed.
    ///
    /// ```swift
    /// var seen = await transport.peerSessionChanges
    /// while let changes = await transport.peerSessionChange(after: seen) { seen = changes; await startOver() }
    /// ```
    public func peerSessionChange(after seen: Int) async -> Int? {
        if peerSessionChangeCount > seen { return peerSessionChangeCount }
        guard !closed else { return nil }
        return await withCheckedContinuation { peerSessionWaiters.append($0) }
    }

    /// True when messages are acknowledged only by ``accept(_:)`` (``EndpointConfiguration/holdsAcknowledgements``).
    public nonisolated var holdsAcknowledgements: Bool { options.endpoint.holdsAcknowledgements }

    /// Delivered messages waiting for ``accept(_:)``.
    public var messagesAwaitingAcceptance: Int { endpoint.messagesAwaitingAcceptance }

    /// True once ``close()`` ran or the transport's session ended: every send throws ``TransportError/closed``.
    public var isClosed: Bool { closed }

    /// Message segments sent again so far (after a retransmission timeout, a gap the peer reported, or a resume):
    /// a measure of loss on the link, counted since the transport began.
    public var retransmittedSegments: Int { endpoint.retransmittedSegments }

    fileprivate func nextMessage() async -> ReceivedMessage? {
        if let message = endpoint.takeMessage() {
            afterChange()
            return message
        }
        guard !closed, messageWaiter == nil else { return nil }
        return await withCheckedContinuation { (continuation: CheckedContinuation<ReceivedMessage?, Never>) in
            messageWaiter = continuation
        }
    }

    // MARK: Driver

    private func handle(_ event: LinkEvent) {
        let now = clock.now()
        switch event {
        case let .connected(size):
            logger?.debug("link connected", metadata: ["packetSize": "\(size)"])
            endpoint.linkConnected(maximumPacketSize: size, now: now)
        case let .maximumPacketSizeChanged(size):
            endpoint.maximumPacketSizeChanged(size, now: now)
        case let .packet(bytes):
            endpoint.receive(bytes[...], now: now)
        case let .disconnected(reason):
            logger?.debug("link disconnected", metadata: ["reason": "\(reason)"])
            endpoint.linkDisconnected(now: now)
        }
        afterChange()
    }

    /// Delivers the endpoint's events, hands a packet to a waiting writer, re-arms the timer.
    private func afterChange() {
        while let event = endpoint.pollEvent() { dispatch(event) }
        if let writer = writerWaiter, endpoint.writeNextPacket(into: &buffer, now: clock.now()) {
            writerWaiter = nil
            writing = true
            writer.resume(returning: buffer)
        }
        if let waiter = messageWaiter, let message = endpoint.takeMessage() {
            messageWaiter = nil
            waiter.resume(returning: message)
            while let event = endpoint.pollEvent() { dispatch(event) }
        }
        if endpoint.canSubmit { submitGate.signalReady() }
        if let timeout = endpoint.nextTimeout, timerSleepsUntil.map({ timeout < $0 }) ?? true {
            if let waiter = timerWaiter {
                timerWaiter = nil
                waiter.resume()
            } else {
                timerSleep?.cancel()
            }
        }
        settleFlushWaiters()
    }

    private func dispatch(_ event: EndpointEvent) {
        switch event {
        case let .sendCompleted(id, messageID):
            logger?.trace("message acknowledged", metadata: ["messageID": "\(messageID)"])
            if let entry = pending[id], !entry.isRequest {
                pending[id] = nil
                entry.continuation.resume(returning: [])
            } else if unclaimed[id]?.isRequest == false {
                unclaimed[id]?.outcome = .success([])
            }
        case let .sendFailed(id, error):
            logger?.debug("send failed: \(error)")
            if let entry = pending.removeValue(forKey: id) {
                entry.continuation.resume(throwing: error)
            } else if unclaimed[id] != nil {
                unclaimed[id]?.outcome = .failure(error)
            }
        case let .responseReceived(id, response):
            if let entry = pending.removeValue(forKey: id) {
                entry.continuation.resume(returning: response.body)
            } else if unclaimed[id] != nil {
                unclaimed[id]?.outcome = .success(response.body)
            }
        case let .receiveFailed(error):
            logger?.warning("receive failed: \(error)")
        case .messageAvailable:
            break
        case .peerSilent:
            renewalRequests.yield()
        case let .peerSessionChanged(previous, current):
            logger?.info("the peer's sender session changed (\(String(previous, radix: 16)) to \(String(current, radix: 16))): the peer restarted or forgot this side")
            peerSessionChangeCount += 1
            let waiters = peerSessionWaiters
            peerSessionWaiters = []
            for waiter in waiters { waiter.resume(returning: peerSessionChangeCount) }
        }
    }

    private func nextPacket() async -> [UInt8]? {
        if closed { return nil }
        if endpoint.writeNextPacket(into: &buffer, now: clock.now()) {
            let packet = buffer
            writing = true
            afterChange()
            return packet
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
            writerWaiter = continuation
        }
    }

    private func writeLoop(send: @Sendable ([UInt8]) async throws -> Void) async {
        while let packet = await nextPacket() {
            do {
                try await send(packet)
            } catch let error as LinkError {
                packetHandedOver()
                if error == .closed { break }
                // Not connected or dropped: the endpoint learns it from the link's events and recovers.
                continue
            } catch {
                packetHandedOver()
                break
            }
            packetHandedOver()
        }
    }

    /// The write loop is done with its packet (the link took it, or failed it).
    private func packetHandedOver() {
        writing = false
        settleFlushWaiters()
    }

    /// The earliest endpoint timeout; registers the timer loop as sleeping until then.
    private func armTimer() -> (deadline: Duration?, closed: Bool) {
        timerSleepsUntil = endpoint.nextTimeout
        return (timerSleepsUntil, closed)
    }

    private func waitForTimeout() async {
        guard !closed else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in timerWaiter = continuation }
    }

    private func fireTimers() {
        timerSleepsUntil = nil
        let now = clock.now()
        if let timeout = endpoint.nextTimeout, timeout <= now {
            endpoint.handleTimeout(now: now)
            // A retransmission or probe timer fired: what it left behind (a stall's diagnosis, e.g. a resume
            // through a restarted bluetoothd that made no progress).
            if let logger, logger.logLevel <= .debug {
                logger.debug("timer fired", metadata: ["state": "\(endpoint.debugSummary)"])
            }
        }
        afterChange()
    }

    /// Sleeps until the earliest timeout, fires it, and again, until the transport closes. The sleep (or the
    /// wait while none is due) is registered before the loop suspends, so an earlier timeout or ``close()``
    /// always finds it: a wake-up that came before a waiter existed would stop the timers for good.
    private func timerLoop() async {
        let sleepUntil = clock.sleepUntil
        while true {
            let (deadline, isClosed) = armTimer()
            if isClosed || Task.isCancelled { return }
            if let deadline {
                let sleep = Task.detached { _ = try? await sleepUntil(deadline) }
                timerSleep = sleep
                await withTaskCancellationHandler { await sleep.value } onCancel: { sleep.cancel() }
                timerSleep = nil
            } else {
                await waitForTimeout()
            }
            fireTimers()
        }
    }
}

extension Transport {
    /// The received messages of a ``Transport`` (see ``Transport/messages``).
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = ReceivedMessage
        public typealias Failure = Never
        let transport: Transport

        public struct AsyncIterator: AsyncIteratorProtocol {
            let transport: Transport
            public mutating func next() async -> ReceivedMessage? { await transport.nextMessage() }
            public mutating func next(isolation actor: isolated (any Actor)?) async -> ReceivedMessage? {
                await transport.nextMessage()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(transport: transport) }
    }
}
