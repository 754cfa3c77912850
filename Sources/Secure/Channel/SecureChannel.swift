public import Logging
public import Transport

/// End-to-end encrypted messages over a ``Transport``: a handshake per connection
/// (``initiate(over:credentials:timeout:logger:)`` on the central, ``accept(over:credentials:logger:)`` on
/// the peripheral), then every message sealed with its own counter. Rejected messages are counted in
/// ``statistics``; a rejected request is answered with a sealed alert so the peer does not wait.
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

    private init(transport: Transport, session: SecureSession, logger: Logger?, peer: AuthorizedKeys.Entry? = nil) {
        self.transport = transport
        self.session = session
        self.logger = logger
        self.peer = peer
    }

    /// Runs the initiator's handshake. Throws ``SecureError/notAuthenticated(_:)`` when the peer holds
    /// another key (and tells the peer so), other ``SecureError``s, or the transport's error.
    public static func initiate(
        over transport: Transport, credentials: SecureCredentials, limits: SecureLimits = SecureLimits(),
        timeout: Duration, logger: Logger? = nil
    ) async throws -> SecureChannel {
        let handshake = ClientHandshake(credentials: credentials, limits: limits)
        let reply = try await transport.request(handshake.hello, timeout: timeout)
        do {
            let (finish, session) = try handshake.finish(serverHello: reply)
            try await transport.send(finish, timeout: timeout)
            logger?.debug("secure session established", metadata: ["mode": "\(credentials.mode)"])
            return SecureChannel(transport: transport, session: session, logger: logger)
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
        guard let hello = await messages.next() else { throw SecureError.closedDuringHandshake }
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

    /// What this session sealed, opened and rejected so far.
    public var statistics: SecureStatistics { session.statistics }

    /// Seals and sends `plaintext`, returning when the peer acknowledged it.
    public func send(_ plaintext: [UInt8], timeout: Duration? = nil) async throws {
        try await transport.send(try session.seal(plaintext), timeout: timeout)
    }

    /// Seals `plaintext` (with `origin`, when given) and queues it on the transport, returning before the peer
    /// acknowledged it: messages submitted one after the other go in that order, several in flight. Await the
    /// receipt's `acknowledged()` as for `Transport.submit`. Throws ``SecureError/messageTooLarge(size:limit:)``
    /// or the transport's error; nothing is sent then.
    ///
    /// ```swift
    /// let receipt = try await channel.submit(reading, origin: MessageOrigin(session: outboxSession, id: 42))
    /// try await receipt.acknowledged()
    /// ```
    public func submit(_ plaintext: [UInt8], origin: MessageOrigin? = nil, timeout: Duration? = nil) async throws -> SendReceipt {
        let record = try origin.map { origin throws(SecureError) in try session.seal(plaintext, origin: origin) } ?? session.seal(plaintext)
        return try await transport.submit(record, timeout: timeout)
    }

    /// Sends a sealed request and returns the opened response. Throws ``SecureError/refusedByPeer(_:)``
    /// when the peer answered with an alert, a ``SecureError`` when the response does not open.
    public func request(_ plaintext: [UInt8], timeout: Duration) async throws -> [UInt8] {
        let response = try await transport.request(try session.seal(plaintext), timeout: timeout)
        switch try session.open(response) {
        case let .data(bytes), let .originated(bytes, _): return bytes
        case let .alert(alert): throw SecureError.refusedByPeer(alert)
        }
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
            switch try session.open(message.body) {
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
