import Backpressure
public import Framing
public import GATT
import Logging
public import Secure
import Synchronization
public import Transport

/// A two-way channel of whole messages with one peer over BLE (or a UNIX socket), in order: acknowledged and
/// resumed with the msgpipe format, framed for other apps with a plain one. A central gets its pipe from
/// `connect(to:options:)` (MsgPipe), a peripheral one per central from ``PipeServer/centrals``.
/// ```swift
/// let pipe = try await MessagePipe.connect(to: "kiosk")   // scans, connects, subscribes; reconnects
/// try await pipe.send(Array(json.utf8))                     // returns once acknowledged
/// for await message in pipe.messages { handle(message.bytes) }
/// await pipe.close()
/// ```
public final class MessagePipe: Sendable {
    /// The peer: its address, `unix:PATH`, or what bluetoothd calls it.
    public let peer: String
    /// The wire format this pipe speaks.
    public let format: FrameFormat
    /// The pipe's Transport (msgpipe format only): for `SecureChannel` or request/response.
    public let transport: Transport?
    /// What the peer's info characteristic said (msgpipe's own GATT, as central), if anything.
    public let peerInfo: MsgPipeServiceInfo?

    private let link: (any PipeLink)?
    private let reconnector: Reconnector?
    /// With end-to-end keys: the session's secure channel.
    let secured: Secured?
    /// With end-to-end keys and acknowledgements not held: messages opened and accepted as they arrive (as
    /// Transport acknowledges a message once it is buffered), two at most ahead of the reader.
    private let opened: BoundedAsyncQueue<PipeMessage, Never>?
    private let plain: PlainState?
    private let connectionCount: @Sendable () -> Int
    /// A Bluetooth central's view of its connections (nil elsewhere).
    private let observation: LinkObservation?
    private let preferredPHY: LEPHY?
    private let connectedCheck: @Sendable () -> Bool
    /// Messages are acknowledged only by ``PipeMessage/accept()`` (``Options/holdsAcknowledgements``).
    private var holdsAcknowledgements: Bool { transport?.holdsAcknowledgements ?? false }

    /// With end-to-end keys (``Options/keys``): the peer's key, named as in the authorized keys (or the
    /// pinned key, unnamed); nil without keys or with a pre-shared key.
    public var peerKey: AuthorizedKeys.Entry? { secured?.peer }

    /// True when every message is sealed end to end (``Options/keys``).
    public var isSealed: Bool { secured != nil }

    /// With end-to-end keys: why the pipe closed itself, once a message from the peer did not open (tampered,
    /// replayed, malformed, or the peer's alert). ``messages`` ended there; nothing after it was delivered.
    public var rejection: SecureError? { secured?.rejection.error }

    /// What carries the data on the latest connection: an LE credit-based channel or GATT; nil where this
    /// side does not know (a peripheral's msgpipe session outlives its connections).
    public var carrier: Carrier? { link?.carrier }

    /// What the latest connection runs on, as far as this side knows: as a Bluetooth central the parameters it
    /// requested, the peer's accepted update (``Options/onPeerParameterUpdate``), the PHY (read from the kernel
    /// now) and the MTU; elsewhere ``LinkParameters/unknown`` says why nothing is known.
    public var linkParameters: LinkParameters {
        guard let observation else {
            return LinkParameters(unknown: [
                "the link's parameters (known to a Bluetooth central only; a peripheral's adapter defaults are in its notes)",
            ])
        }
        return observation.parameters(preferredPHY: preferredPHY, carrier: link?.carrier ?? .gatt)
    }

    /// The connections this pipe has had so far: 1, then one more after each reconnect (its peer's, as
    /// peripheral). A message arrived on the latest.
    public var connections: Int { connectionCount() }

    /// As peripheral: true while the central's connection is up (a central that left may still come back and
    /// resume while its session lasts). As central: true (the pipe reconnects by itself until it gives up).
    public var isConnected: Bool { connectedCheck() }

    /// The plain formats' receiving side and the packet size for sending.
    private final class PlainState: Sendable {
        private struct Connection {
            /// The packet size while connected (as peripheral: once the central subscribed).
            var packetSize: Int?
            /// Why the link went down, while it is down.
            var disconnected: String?
            /// Sends waiting for the central to subscribe.
            var waiters: [CheckedContinuation<Void, Never>] = []
        }

        let inbox: BoundedAsyncQueue<PipeMessage, Never>
        let sending = CreditPool(capacity: 1)
        let task = Mutex<Task<Void, Never>?>(nil)
        let onSent: @Sendable (Int) -> Void
        private let connection: Mutex<Connection>

        init(packetSize: Int?, onSent: @escaping @Sendable (Int) -> Void) {
            inbox = BoundedAsyncQueue(capacity: 16)
            connection = Mutex(Connection(packetSize: packetSize))
            self.onSent = onSent
        }

        func connected(packetSize: Int) {
            let waiters = connection.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.packetSize = packetSize
                state.disconnected = nil
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        func disconnected(_ reason: String) {
            let waiters = connection.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.packetSize = nil
                state.disconnected = reason
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Why the link is down, if it is.
        var disconnectReason: String? { connection.withLock { $0.disconnected } }

        /// The packet size once the link is up (a peripheral's central subscribed); throws when it went down.
        func packetSize() async throws -> Int {
            while true {
                let state = connection.withLock { ($0.packetSize, $0.disconnected) }
                if let size = state.0 { return size }
                if let reason = state.1 { throw MessagePipeError.disconnected(reason) }
                await withCheckedContinuation { continuation in
                    let ready = connection.withLock { state -> Bool in
                        if state.packetSize != nil || state.disconnected != nil { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    /// A pipe over `transport` (msgpipe format).
    init(
        peer: String, transport: Transport, link: (any PipeLink)?, reconnector: Reconnector?, peerInfo: MsgPipeServiceInfo?,
        secured: Secured? = nil, connections: @escaping @Sendable () -> Int,
        isConnected: @escaping @Sendable () -> Bool = { true }, observation: LinkObservation? = nil,
        preferredPHY: LEPHY? = nil
    ) {
        self.secured = secured
        if let secured, secured.acceptsOnRead {
            let queue = BoundedAsyncQueue<PipeMessage, Never>(capacity: 2)
            opened = queue
            Task {
                for await message in PipeMessages(.secure(secured, transport)) {
                    do { try await queue.push(message) } catch { break }
                }
                queue.finish()
            }
        } else {
            opened = nil
        }
        connectionCount = connections
        self.observation = observation
        self.preferredPHY = preferredPHY
        connectedCheck = isConnected
        self.peer = peer
        format = .msgpipe
        self.transport = transport
        self.link = link
        self.reconnector = reconnector
        self.peerInfo = peerInfo
        plain = nil
    }

    /// A plain-format pipe over `link`, whose packets carry at most `packetSize` bytes (nil: not known until
    /// the next `.connected`, as for a peripheral's central that wrote before it subscribed); `events` are the
    /// link's events from here on.
    init<Events: AsyncSequence<LinkEvent, Never> & Sendable>(
        peer: String, format: FrameFormat, link: any PipeLink, events: Events, packetSize: Int?, reconnector: Reconnector?,
        options: MessagePipe.Options, connections: @escaping @Sendable () -> Int, observation: LinkObservation? = nil
    ) {
        connectionCount = connections
        self.observation = observation
        preferredPHY = options.backend.kernelOptions?.connectionParameters?.phy
        self.peer = peer
        self.format = format
        transport = nil
        secured = nil
        opened = nil
        self.link = link
        self.reconnector = reconnector
        peerInfo = link.peerInfo
        let state = PlainState(packetSize: packetSize, onSent: options.onPacketSent)
        plain = state
        connectedCheck = { state.disconnectReason == nil }
        let limits = PlainReceiving.limits(maximumMessageSize: options.maximumMessageSize)
        let observed = ObservedEvents(base: events) { event in
            options.onLinkEvent(event, link)
            switch event {
            case let .connected(size), let .maximumPacketSizeChanged(size):
                state.connected(packetSize: size)
            case let .disconnected(reason):
                state.disconnected(reason)
                reconnector?.dropped(reason)
            case .packet:
                break
            }
        }
        state.task.withLock {
            $0 = Task {
                _ = await PlainReceiving.receive(observed, format: format, limits: limits, logger: options.logger) {
                    (body: [UInt8]) async throws(CancellationError) -> Bool in
                    do { try await state.inbox.push(PipeMessage(bytes: body)) } catch { return false }
                    return true
                }
                state.inbox.finish()
            }
        }
    }

    /// Sends one whole message. msgpipe format: returns once the peer acknowledged all of it; throws
    /// `TransportError` (e.g. not acknowledged within `timeout`), ``MessagePipeError/linkLost(attempts:)``
    /// when reconnecting gave up, or ``MessagePipeError/messageTooLarge(size:limit:)``; with end-to-end keys
    /// ``MessagePipeError/peerSessionReset(maybeDelivered:)`` when the peer forgot the secure session (the pipe
    /// renews it by itself; this message is not sent again). Plain formats: returns
    /// once the peer's ATT layer took every packet (see ``PlainSending``); a drop or `timeout` is an error and
    /// nothing is resumed. Concurrent sends go one after the other.
    public func send(_ bytes: [UInt8], timeout: Duration? = nil) async throws {
        if let info = peerInfo, bytes.count > Int(info.maximumMessageSize) {
            throw MessagePipeError.messageTooLarge(size: bytes.count, limit: Int(info.maximumMessageSize))
        }
        if let transport {
            do {
                if let secured {
                    try await secured.channel.send(bytes, timeout: timeout)
                } else {
                    try await transport.send(bytes, timeout: timeout)
                }
            } catch {
                throw pipeError(error)
            }
            return
        }
        guard let plain, let link else { throw MessagePipeError.closed }
        try await plain.sending.acquire()
        defer { plain.sending.release() }
        let timedOut = OnceFlag()
        let watchdog = timeout.map { timeout in
            Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                timedOut.set()
                plain.disconnected("timed out")
                await link.close()
            }
        }
        defer { watchdog?.cancel() }
        do {
            let packetSize = try await plain.packetSize()
            try await PlainSending.send(bytes, format: format, packetSize: packetSize, over: link, onSent: plain.onSent)
        } catch let error as FramingError {
            throw error
        } catch {
            if timedOut.isSet { throw MessagePipeError.timedOut }
            if let reason = plain.disconnectReason { throw MessagePipeError.disconnected(reason) }
            throw error
        }
    }

    /// Queues one whole message and returns once it is queued, before the peer acknowledged it: the messages
    /// one task submits go in call order, several in flight at once (many small messages go much faster than
    /// one ``send(_:timeout:)`` after the other), sealed ones too. Await each receipt's `acknowledged()`: it
    /// returns or throws as `send` does. With a plain format the message is sent whole here, as by `send`, and
    /// the receipt is already settled.
    ///
    /// ```swift
    /// var receipts: [SendReceipt] = []
    /// for reading in readings { receipts.append(try await pipe.submit(reading)) }   // queued in order
    /// for receipt in receipts { try await receipt.acknowledged() }
    /// ```
    public func submit(_ bytes: [UInt8], timeout: Duration? = nil) async throws -> SendReceipt {
        try await submit(bytes, origin: nil, timeout: timeout)
    }

    /// ``submit(_:timeout:)`` for a queued message that names its `origin` (an outbox's session and id), sealed
    /// with it so that the peer's journal knows a resend over a new Transport session. Needs end-to-end keys
    /// (``MessagePipeError/keysUnusable(_:)`` without them): a plain message's identity is its Transport's. Once
    /// the peer forgot the secure session it throws ``MessagePipeError/peerSessionReset(maybeDelivered:)`` (false)
    /// rather than renew it: a queue goes on in order from the first refused message, on a new pipe.
    package func submit(_ bytes: [UInt8], origin: MessageOrigin?, timeout: Duration? = nil) async throws -> SendReceipt {
        guard let transport else {
            if origin != nil { throw MessagePipeError.keysUnusable("a message's origin is sealed with it: the plain formats have none") }
            try await send(bytes, timeout: timeout)
            return SendReceipt {}
        }
        if origin != nil, secured == nil {
            throw MessagePipeError.keysUnusable("a message's origin is sealed with it: this pipe has no end-to-end keys")
        }
        if let info = peerInfo, bytes.count > Int(info.maximumMessageSize) {
            throw MessagePipeError.messageTooLarge(size: bytes.count, limit: Int(info.maximumMessageSize))
        }
        let receipt: SendReceipt
        do {
            if let secured {
                // A queued message keeps its order: after the peer forgot the session, it fails rather than
                // going ahead of those refused before it (the queue goes on from them on a new connection).
                receipt = try await secured.channel.submit(bytes, origin: origin, timeout: timeout, renewing: origin == nil)
            } else {
                receipt = try await transport.submit(bytes, timeout: timeout)
            }
        } catch {
            throw pipeError(error)
        }
        return SendReceipt { [self] in
            do { try await receipt.acknowledged() } catch { throw pipeError(error) }
        }
    }

    /// What a failed send or request throws: ``MessagePipeError/linkLost(attempts:)`` once reconnecting gave up
    /// (the cause of it), ``MessagePipeError/peerSessionReset(maybeDelivered:)`` for a sealed message the peer
    /// refused because it forgot the secure session, ``MessagePipeError/notAuthenticated(_:)`` when the peer refused
    /// the new handshake that followed; else `error`.
    func pipeError(_ error: any Error) -> any Error {
        if let reconnector, reconnector.hasGivenUp { return MessagePipeError.linkLost(attempts: reconnector.attempts ?? 0) }
        if case let SecureError.sessionForgotten(maybeDelivered) = error {
            return MessagePipeError.peerSessionReset(maybeDelivered: maybeDelivered)
        }
        if let secure = error as? SecureError, let refusal = MessagePipeError(refusal: secure) { return refusal }
        return error
    }

    /// The messages the peer sends, whole and in order; ends when the pipe is closed. Backpressured: a
    /// consumer that stops reading stops the peer's sending, nothing is dropped. With end-to-end keys each one
    /// is opened; one that does not open (tampered, replayed, malformed) closes the pipe, ending the sequence,
    /// and is never acknowledged.
    public var messages: PipeMessages {
        if let opened { PipeMessages(.queue(opened)) }
        else if let transport, let secured { PipeMessages(.secure(secured, transport)) }
        else if let transport { PipeMessages(.transport(transport, holds: holdsAcknowledgements)) }
        else { PipeMessages(.queue(plain!.inbox)) }
    }

    /// Ends the pipe: stops reconnecting, closes Transport (messages already delivered stay readable) or the
    /// link. A peripheral's pipe ends its central's session.
    public func close() async {
        await close(awaitingDropWithin: nil)
    }

    /// Ends the pipe as ``close()`` does, but first hands the link the acknowledgements Transport owes the peer
    /// (at most `grace`), then gives the peer up to `grace` to end the connection itself (so it receives its
    /// last acknowledgement), where the pipe reconnects (as central).
    public func close(awaitingDropWithin grace: Duration?) async {
        if let grace, let transport { _ = await transport.flush(within: grace) }
        await reconnector?.stop(awaitingDropWithin: grace)
        observation?.stop()
        if let transport {
            await transport.close()
        }
        secured?.onEnd()
        opened?.finish()
        if let link { await link.close() }
        plain?.disconnected("closed")
        plain?.task.withLock { $0 }?.cancel()
        plain?.inbox.finish()
    }
}

/// The messages of a ``MessagePipe``.
public struct PipeMessages: AsyncSequence, Sendable {
    public typealias Element = PipeMessage
    public typealias Failure = Never

    enum Source: Sendable {
        case transport(Transport, holds: Bool)
        case queue(BoundedAsyncQueue<PipeMessage, Never>)
        case secure(MessagePipe.Secured, Transport)
    }

    let source: Source

    init(_ source: Source) { self.source = source }

    public struct AsyncIterator: AsyncIteratorProtocol {
        enum Base {
            case transport(Transport.Messages.AsyncIterator, Transport, holds: Bool)
            case queue(BoundedAsyncQueue<PipeMessage, Never>.AsyncIterator)
            case secure(MessagePipe.Secured, Transport)
            case ended
        }

        var base: Base

        public mutating func next() async -> PipeMessage? {
            switch base {
            case .transport(var iterator, let transport, let holds):
                defer { base = .transport(iterator, transport, holds: holds) }
                return await iterator.next().map { PipeMessage($0, heldBy: holds ? transport : nil, from: transport) }
            case var .queue(iterator):
                defer { base = .queue(iterator) }
                return await iterator.next()
            case let .secure(secured, transport):
                let message: SecureMessage?
                do {
                    // Recorded before the peer is told (a request is answered with an alert), so whoever
                    // reads ``MessagePipe/rejection`` once the messages end never misses it.
                    message = try await secured.channel.receive(onRejected: { secured.rejection.record($0) })
                } catch {
                    base = .ended
                    secured.rejection.record(error)
                    secured.onRejected(error)
                    await secured.channel.close()
                    secured.onEnd()
                    return nil
                }
                guard let message else {
                    base = .ended
                    secured.onEnd()
                    return nil
                }
                if secured.acceptsOnRead { await secured.channel.accept(message) }
                return PipeMessage(
                    opened: message, sender: secured.peer, heldBy: secured.acceptsOnRead ? nil : transport,
                    from: secured.channel)
            case .ended:
                return nil
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        switch source {
        case let .transport(transport, holds):
            AsyncIterator(base: .transport(transport.messages.makeAsyncIterator(), transport, holds: holds))
        case let .queue(queue): AsyncIterator(base: .queue(queue.makeAsyncIterator()))
        case let .secure(secured, transport): AsyncIterator(base: .secure(secured, transport))
        }
    }
}

/// A flag set once by one task and read by another.
package final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)

    package init() {}

    package func set() { value.store(true, ordering: .relaxed) }
    package var isSet: Bool { value.load(ordering: .relaxed) }
    /// Sets the flag; true for the one caller that set it first.
    package func claim() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
}
