public import Logging
public import Transport

/// End-to-end encrypted messages over a ``Transport``: a handshake per Transport session
/// (``initiate(over:credentials:timeout:logger:)`` on the central, ``accept(over:credentials:logger:)`` on
/// the peripheral), then every message sealed with its own counter. Rejected messages are counted in
/// ``statistics``; a rejected request is answered with a sealed alert so the peer does not wait. An initiator
/// whose peer forgot the session (its Transport session changed, ``Transport/peerSessionChanges``) runs a new
/// handshake on the same Transport before it seals again (``renewIfPeerChanged()``, PROTOCOL.md 6.8).
///
/// ```swift
/// let credentials = SecureCredentials.preSharedKey(try PreSharedKey(text: keyText))
/// let channel = try await SecureChannel.initiate(over: transport, credentials: credentials, timeout: .seconds(10))
/// let answer = try await channel.request(Array("ping".utf8), timeout: .seconds(5))
/// // The other side: SecureChannel.accept(over:credentials:), then receive() and respond(to:with:).
/// ```
public actor SecureChannel {
    private let transport: Transport
    private var session: SecureSession
    private let logger: Logger?
    /// As responder in an identity mode: the client's key, and its name when it came from an
    /// ``AuthorizedKeys`` set. Nil with a pre-shared key and as initiator.
    public nonisolated let peer: AuthorizedKeys.Entry?

    /// As initiator: what a new handshake needs.
    private struct Renewal {
        let credentials: SecureCredentials
        let limits: SecureLimits
        let timeout: Duration
    }

    private let renewal: Renewal?
    /// The transport's ``Transport/peerSessionChanges`` when `session` was made: the peer holds it while they match.
    private var sessionEpoch: Int
    /// `sessionEpoch` of the first session.
    private let firstEpoch: Int
    /// The peer's Transport session `session` was made with.
    private var sessionPeer: UInt64?
    /// The session before the latest renewal and the peer's Transport session it served: messages that peer
    /// sent before it forgot us are still opened with it.
    private var retired: (peer: UInt64, session: SecureSession)?
    /// The renewal under way: nothing is sealed meanwhile.
    private var renewing: Task<Void, any Error>?
    /// A renewal the peer refused: final, every seal throws it.
    private var refusal: SecureError?
    /// Records sealed and not yet queued on the transport: a renewal's ClientHello waits for them, so the peer
    /// meets every record of the old session before it (and refuses them) and none after.
    private var inTransit = 0
    private var inTransitWaiters: [CheckedContinuation<Void, Never>] = []

    private init(
        transport: Transport, session: SecureSession, logger: Logger?, peer: AuthorizedKeys.Entry? = nil,
        renewal: Renewal? = nil, epoch: Int = 0, sessionPeer: UInt64? = nil
    ) {
        self.transport = transport
        self.session = session
        self.logger = logger
        self.peer = peer
        self.renewal = renewal
        sessionEpoch = epoch
        firstEpoch = epoch
        self.sessionPeer = sessionPeer
    }

    /// Runs the initiator's handshake. Throws ``SecureError/notAuthenticated(_:)`` when the peer holds
    /// another key (and tells the peer so), other ``SecureError``s, or the transport's error.
    public static func initiate(
        over transport: Transport, credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        timeout: Duration, logger: Logger? = nil
    ) async throws -> SecureChannel {
        let renewal = Renewal(credentials: credentials, limits: limits, timeout: timeout)
        let epoch = await transport.peerSessionChanges
        let session = try await handshake(over: transport, renewal, logger: logger)
        return SecureChannel(
            transport: transport, session: session, logger: logger, renewal: renewal, epoch: epoch,
            sessionPeer: await transport.peerSession)
    }

    /// The initiator's handshake: ClientHello as a request, ServerHello checked, ClientFinish sent.
    private static func handshake(over transport: Transport, _ renewal: Renewal, logger: Logger?) async throws -> SecureSession {
        let (credentials, timeout) = (renewal.credentials, renewal.timeout)
        let handshake = ClientHandshake(credentials: credentials, limits: renewal.limits)
        let reply = try await transport.request(handshake.hello, timeout: timeout)
        do {
            let (finish, session) = try handshake.finish(serverHello: reply)
            try await transport.send(finish, timeout: timeout)
            logger?.debug("secure session established", metadata: ["mode": "\(credentials.mode)"])
            return session
        } catch let error as SecureError {
            if let alert = SecureAlert(error), alert != .unexpected {
                // Best effort and brief: the responder may close the link before acknowledging it, and the
                // caller must learn "not authenticated" well within its own deadline.
                try? await transport.send(HandshakeReject(alert).bytes, timeout: min(timeout, .seconds(2)))
            }
            throw error
        }
    }

    /// Runs the responder's handshake on the first two messages of `transport`. Throws
    /// ``SecureError/notAuthenticated(_:)`` when the client holds another key,
    /// ``SecureError/closedDuringHandshake`` when the connection ends first.
    public static func accept(
        over transport: Transport, credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        logger: Logger? = nil
    ) async throws -> SecureChannel {
        try await accept(over: transport, handshake: ServerHandshake(credentials: credentials, limits: limits), logger: logger)
    }

    /// Runs the responder's handshake accepting any client whose key is in `authorizedKeys` (the client
    /// announces its key, mode 3); ``peer`` tells which entry connected. A client with another key gets one
    /// Reject ("not authenticated") and this throws ``SecureError/notAuthenticated(_:)``; nothing it sends
    /// is ever opened.
    ///
    /// ```swift
    /// let keys = try AuthorizedKeys(parsing: fileText)
    /// let channel = try await SecureChannel.accept(over: transport, identity: identity, authorizedKeys: keys)
    /// print("\(channel.peer!.label) connected")
    /// ```
    public static func accept(
        over transport: Transport, identity: IdentityKey, authorizedKeys: AuthorizedKeys,
        limits: SecureLimits = SecureLimits(), logger: Logger? = nil
    ) async throws -> SecureChannel {
        try await accept(
            over: transport,
            handshake: ServerHandshake(identity: identity, authorizedKeys: authorizedKeys, limits: limits), logger: logger)
    }

    private static func accept(
        over transport: Transport, handshake: ServerHandshake, logger: Logger?
    ) async throws -> SecureChannel {
        var handshake = handshake
        var messages = transport.messages.makeAsyncIterator()
        var first = await messages.next()
        while let stale = first, SealedRecord.hasShape(stale.body) {
            // A record sealed for a session this side does not hold: a central that resumed its Transport session
            // after this side forgot it (a restart, an expired resume window). Refused, so its send fails, and
            // the ClientHello it sends once it learns that is awaited (the caller's handshake deadline bounds it).
            logger?.debug("refused a record of a secure session this side does not hold; awaiting a new handshake")
            await transport.reject(stale, reason: .notAuthenticated)
            first = await messages.next()
        }
        guard let hello = first else { throw SecureError.closedDuringHandshake }
        guard hello.isRequest else {
            // Data from a client without keys: refused for good (on a transport that holds acknowledgements its
            // send fails instead of completing), with a moment for the refusal to go out before the caller closes.
            await transport.reject(hello, reason: .notAuthenticated)
            try? await Task.sleep(for: .seconds(1))
            throw SecureError.notAuthenticated("the client sent a message without end-to-end keys")
        }
        do {
            try await transport.respond(to: hello, with: try handshake.respond(to: hello.body))
        } catch let error as SecureError {
            if hello.isRequest {
                await reject(hello, with: SecureAlert(error) ?? .malformed, over: transport)
            }
            throw error
        }
        // On a transport that holds acknowledgements only what the handshake took is acknowledged: a client
        // that sent data instead of a handshake never learns it was delivered.
        await transport.accept(hello)
        guard let finish = await messages.next() else { throw SecureError.closedDuringHandshake }
        let session = try handshake.complete(clientFinish: finish.body)
        await transport.accept(finish)
        logger?.debug("secure session established", metadata: ["peer": "\(handshake.peer?.label ?? "-")"])
        return SecureChannel(transport: transport, session: session, logger: logger, peer: handshake.peer)
    }

    /// Answers a refused ClientHello with one Reject, waiting at most 2 s for its acknowledgement: a client
    /// that is refused usually leaves at once, and a session that may resume would otherwise hold the
    /// refusal open until it expires.
    private static func reject(_ hello: ReceivedMessage, with alert: SecureAlert, over transport: Transport) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await transport.respond(to: hello, with: HandshakeReject(alert).bytes) }
            group.addTask { try? await Task.sleep(for: .seconds(2)) }
            await group.next()
            group.cancelAll()
        }
    }

    /// What the current session sealed, opened and rejected so far (a renewal starts a new count).
    public var statistics: SecureStatistics { session.statistics }

    /// As initiator: when the peer's Transport session changed since this secure session was made (it restarted,
    /// or forgot ours), runs a new handshake on the same Transport and seals with its keys from then on; returns
    /// at once otherwise, and as responder. Records already sealed go first and the peer refuses them
    /// (``SecureError/sessionForgotten(maybeDelivered:)``). Throws the handshake's error: a refusal
    /// (``SecureError/notAuthenticated(_:)``, ``SecureError/refusedByPeer(_:)``) is final, every later seal throws
    /// it; after another failure the old keys stay until the peer's session changes again.
    ///
    /// ```swift
    /// var seen = await transport.peerSessionChanges
    /// while let changes = await transport.peerSessionChange(after: seen) { seen = changes; try await channel.renewIfPeerChanged() }
    /// ```
    public func renewIfPeerChanged() async throws {
        guard let renewal else { return }
        while true {
            if let refusal { throw refusal }
            if let renewing {
                try await renewing.value
                continue
            }
            let changes = await transport.peerSessionChanges
            guard renewing == nil else { continue }
            if changes == sessionEpoch { return }
            let task = Task { try await self.renew(renewal, epoch: changes) }
            renewing = task
            try await task.value
            return
        }
    }

    private func renew(_ renewal: Renewal, epoch: Int) async throws {
        defer { renewing = nil }
        // The epoch is taken whatever the outcome: one handshake per change of the peer's session.
        sessionEpoch = epoch
        while inTransit > 0 { await withCheckedContinuation { inTransitWaiters.append($0) } }
        logger?.info("the peer forgot the secure session; running a new handshake")
        let renewed: SecureSession
        do {
            renewed = try await Self.handshake(over: transport, renewal, logger: logger)
        } catch let error as SecureError {
            switch error {
            case .notAuthenticated, .modeMismatch, .refusedByPeer: refusal = error
            default: break
            }
            throw error
        }
        if let sessionPeer { retired = (sessionPeer, session) }
        session = renewed
        sessionPeer = await transport.peerSession
    }

    /// Seals `plaintext` with the session the peer holds now (renewing it first if needed) and queues it with
    /// `enqueue`, before any renewal's ClientHello; returns what `enqueue` returned and the epoch it was sealed in.
    private func sealAndQueue<T: Sendable>(
        renewing mayRenew: Bool = true, _ seal: (inout SecureSession) throws -> [UInt8],
        _ enqueue: @Sendable ([UInt8]) async throws -> T
    ) async throws -> (T, epoch: Int) {
        if mayRenew {
            try await renewIfPeerChanged()
            while let renewing { try await renewing.value }
        } else if renewal != nil {
            // Sealed with the first session's keys while the peer holds it, or not at all: never with renewed keys,
            // which would let this message overtake the ones the peer refused before it.
            if let refusal { throw refusal }
            guard sessionEpoch == firstEpoch, await transport.peerSessionChanges == firstEpoch, sessionEpoch == firstEpoch else {
                throw SecureError.sessionForgotten(maybeDelivered: false)
            }
        }
        if let refusal { throw refusal }
        let record = try seal(&session)
        let epoch = sessionEpoch
        inTransit += 1
        defer {
            inTransit -= 1
            if inTransit == 0 {
                let waiters = inTransitWaiters
                inTransitWaiters = []
                for waiter in waiters { waiter.resume() }
            }
        }
        do { return (try await enqueue(record), epoch) } catch { throw await forgotten(error, sealedIn: epoch) }
    }

    /// `error`, or ``SecureError/sessionForgotten(maybeDelivered:)`` when it is the peer refusing a record sealed
    /// in `epoch` for want of its session: it may have taken it before, when its session changed since.
    private func forgotten(_ error: any Error, sealedIn epoch: Int) async -> any Error {
        guard renewal != nil, case TransportError.rejectedByPeer(_, .notAuthenticated) = error else { return error }
        return SecureError.sessionForgotten(maybeDelivered: await transport.peerSessionChanges != epoch)
    }

    /// Seals and sends `plaintext`, returning when the peer acknowledged it. Throws
    /// ``SecureError/sessionForgotten(maybeDelivered:)`` when the peer forgot the session it was sealed in.
    public func send(_ plaintext: [UInt8], timeout: Duration? = nil) async throws {
        let (receipt, epoch) = try await sealAndQueue({ try $0.seal(plaintext) }) { [transport] in
            try await transport.submit($0, timeout: timeout)
        }
        do { try await receipt.acknowledged() } catch { throw await forgotten(error, sealedIn: epoch) }
    }

    /// Seals `plaintext` (with `origin`, when given) and queues it on the transport, returning before the peer
    /// acknowledged it: messages submitted one after the other go in that order, several in flight. Await the
    /// receipt's `acknowledged()` as for `Transport.submit` (it throws ``SecureError/sessionForgotten(maybeDelivered:)``
    /// as ``send(_:timeout:)`` does). Throws ``SecureError/messageTooLarge(size:limit:)`` or the transport's error;
    /// nothing is sent then. With `renewing` false, a channel whose peer forgot its first session (renewed or
    /// not) throws ``SecureError/sessionForgotten(maybeDelivered:)`` (false) instead, so a queue that keeps its order
    /// stops and goes on from the first refused message on a new connection.
    ///
    /// ```swift
    /// let receipt = try await channel.submit(reading, origin: MessageOrigin(session: outboxSession, id: 42))
    /// try await receipt.acknowledged()
    /// ```
    public func submit(
        _ plaintext: [UInt8], origin: MessageOrigin? = nil, timeout: Duration? = nil, renewing: Bool = true
    ) async throws -> SendReceipt {
        let (receipt, epoch) = try await sealAndQueue(renewing: renewing, { session in
            try origin.map { try session.seal(plaintext, origin: $0) } ?? session.seal(plaintext)
        }) { [transport] in
            try await transport.submit($0, timeout: timeout)
        }
        return SendReceipt {
            do { try await receipt.acknowledged() } catch { throw await self.forgotten(error, sealedIn: epoch) }
        }
    }

    /// Sends a sealed request and returns the opened response. Throws ``SecureError/refusedByPeer(_:)``
    /// when the peer answered with an alert, a ``SecureError`` when the response does not open,
    /// ``SecureError/sessionForgotten(maybeDelivered:)`` as ``send(_:timeout:)`` does.
    public func request(_ plaintext: [UInt8], timeout: Duration) async throws -> [UInt8] {
        // The request stays in transit until answered: a renewal's ClientHello follows it.
        let (response, _) = try await sealAndQueue({ try $0.seal(plaintext) }) { [transport] in
            try await transport.request($0, timeout: timeout)
        }
        switch try session.open(response) {
        case let .data(bytes), let .originated(bytes, _): return bytes
        case let .alert(alert): throw SecureError.refusedByPeer(alert)
        }
    }

    /// Opens `bytes` from the peer's Transport session `sender`: with the retired session when that peer sent
    /// it before it forgot us, else with the current one.
    private func open(_ bytes: [UInt8], from sender: UInt64) throws(SecureError) -> SecureSession.Opened {
        if var old = retired, old.peer == sender {
            defer { retired = old }
            return try old.session.open(bytes)
        }
        return try session.open(bytes)
    }

    /// The next message from the peer, opened; nil when the transport closed. A message that does not open
    /// (replayed, tampered, malformed) is counted, handed to `onRejected`, answered with a sealed alert if
    /// it was a request, and thrown as a ``SecureError``. `onRejected` runs before the alert goes out, so a
    /// record of the rejection never lags behind the peer learning of it. The channel stays usable: call
    /// again for the next message.
    public func receive(onRejected: (SecureError) -> Void = { _ in }) async throws(SecureError) -> SecureMessage? {
        var messages = transport.messages.makeAsyncIterator()
        guard let message = await messages.next() else { return nil }
        do throws(SecureError) {
            switch try open(message.body, from: message.senderSession) {
            case let .data(plaintext):
                return SecureMessage(plaintext: plaintext, received: message)
            case let .originated(plaintext, origin):
                return SecureMessage(plaintext: plaintext, received: message, origin: origin)
            case let .alert(alert):
                throw .refusedByPeer(alert)
            }
        } catch {
            logger?.warning("\(error)", metadata: ["rejected": "\(session.statistics.rejected)"])
            onRejected(error)
            if message.isRequest {
                let alert = SecureAlert(error) ?? .unexpected
                do {
                    try await transport.respond(to: message, with: try session.sealAlert(alert))
                } catch {
                    logger?.debug("alert not delivered: \(error)")
                }
            }
            throw error
        }
    }

    /// On a transport that holds acknowledgements (`EndpointConfiguration.holdsAcknowledgements`): `message`
    /// is safe, so the peer's send of it completes now. A message that did not open is never acknowledged.
    /// Without holding it does nothing.
    public func accept(_ message: SecureMessage) async {
        await transport.accept(message.received)
    }

    /// Answers `request` with a sealed `plaintext`.
    public func respond(to request: SecureMessage, with plaintext: [UInt8]) async throws {
        try await transport.respond(to: request.received, with: try session.seal(plaintext))
    }

    /// Closes the transport (and its link).
    public func close() async {
        await transport.close()
    }
}
