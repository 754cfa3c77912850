public import Backpressure
public import Logging
import Synchronization

/// Serves many peers at once over one-connection links, each peer session with a ``Transport`` of its own
/// that outlives its connections: the server side of a peripheral that several centrals use at the same
/// time (or of a UNIX socket many clients connect to).
///
/// Hand each new connection to ``accept(_:peer:)``. The listener reads the connection until the peer's
/// `hello` (PROTOCOL.md 3.9: every endpoint sends one first on every connection), then attaches it to the
/// Transport of that session: a new ``TransportSession``, published on ``sessions``, or the one an earlier
/// connection of the same peer left, which resumes. Nothing is shared between sessions but the limits:
/// each has its own Transport, so a slow peer holds only its own window and buffers.
///
/// ```swift
/// let listener = TransportListener()
/// Task { for await session in listener.sessions { serve(session.transport) } }
/// await listener.accept(connection, peer: "00:AA:01:00:00:01")   // per connection, until it ends
/// ```
public final class TransportListener: Sendable {
    /// What bounds a listener.
    public struct Limits: Sendable {
        /// Sessions kept at once, connected or waiting for their peer to come back. A new peer beyond it
        /// replaces the session whose peer left longest ago, or is refused while every session is connected.
        public var maximumSessions = 8
        /// How long a new connection may take to send its `hello`; it is closed after that.
        public var helloTimeout: Duration = .seconds(10)
        /// Packets a new connection may send before its `hello` (they are dropped: the peer's sender
        /// retransmits what was not acknowledged); it is closed after that many.
        public var packetsBeforeHello = 1024
        /// How long a session waits for its peer to reconnect before it is closed.
        public var resumeWindow: Duration = .seconds(300)
        /// Link events buffered per session before the connection's reading pauses.
        public var eventCapacity = 64

        public init() {}
    }

    /// Each new peer session, once its first connection is attached. Backpressured: while nobody takes
    /// them, new peers wait in ``accept(_:peer:)``. Finishes when the listener closes.
    public let sessions: BoundedAsyncQueue<TransportSession, Never>

    private let options: TransportOptions
    private let limits: Limits
    private let logger: Logger?
    private let onUngreeted: @Sendable (String, UngreetedEnd) -> Void

    /// How a connection ended before its `hello` (told to `onUngreeted`).
    public enum UngreetedEnd: Sendable, Equatable {
        /// Silent past ``Limits/helloTimeout``: the listener closed it.
        case silent
        /// ``Limits/packetsBeforeHello`` other packets came first: the listener closed it.
        case tooManyPackets
        /// The peer or its link ended it first (a central's idle ATT connection beside its channel, say).
        case gone
    }

    private struct Registry {
        var sessions: [UInt64: TransportSession] = [:]
        var closed = false
        var connectionNumber: UInt64 = 0
    }

    private let registry = Mutex(Registry())

    /// A listener whose sessions run Transports with `options`. `onUngreeted` is told the peer of each
    /// connection that ended before its `hello`, which no session ever sees, and how it ended.
    public init(
        options: TransportOptions = TransportOptions(), limits: Limits = Limits(), logger: Logger? = nil,
        onUngreeted: @escaping @Sendable (_ peer: String, _ end: UngreetedEnd) -> Void = { _, _ in }
    ) {
        self.onUngreeted = onUngreeted
        var options = options
        options.senderSession = nil  // one session per central: each of them a new one
        self.options = options
        self.limits = limits
        self.logger = logger
        sessions = BoundedAsyncQueue(capacity: max(1, limits.maximumSessions))
    }

    /// The sessions kept now (connected or waiting for their peer).
    public var sessionCount: Int { registry.withLock { $0.sessions.count } }

    /// Serves one connection: `connection` carries exactly one connection to one peer (`.connected`, packets,
    /// `.disconnected`) and is closed before this returns, once the peer disconnected, the connection was
    /// refused (no `hello` in time, no room), or the listener closed. `peer` describes it (an address).
    public func accept<L: Link>(_ connection: L, peer: String) async {
        var events = connection.events.makeAsyncIterator()
        let timedOut = Mutex(false)
        let timeout = Task { [limits] in
            do { try await Task.sleep(for: limits.helloTimeout) } catch { return }
            timedOut.withLock { $0 = true }
            await connection.close()
        }
        let awaited = await Self.awaitHello(&events, limit: limits.packetsBeforeHello)
        timeout.cancel()
        let greeting: Greeting
        switch awaited {
        case let .greeting(hello):
            greeting = hello
        case let .ended(end):
            let end = timedOut.withLock { $0 } ? .silent : end
            logger?.info("a connection from \(peer) ended before its hello (\(end))")
            await connection.close()
            return onUngreeted(peer, end)
        }
        guard let session = await session(for: greeting.session, peer: peer) else {
            return await connection.close()
        }
        // A peer that reconnects before its old connection timed out here: the relay drops that one, dead
        // to the peer, and carries this one.
        let number = registry.withLock { registry -> UInt64 in
            registry.connectionNumber += 1
            return registry.connectionNumber
        }
        let greeted: [LinkEvent] = [.connected(maximumPacketSize: greeting.maximumPacketSize), .packet(greeting.hello)]
        var carried = false
        var guarded = OneSessionEvents(base: events, session: greeting.session)
        _ = await session.link.carry(connection, events: &guarded, replaying: greeted) {
            carried = true
            session.connected(peer: peer, number: Int(truncatingIfNeeded: number))
        }
        if let other = guarded.otherSession {
            logger?.warning("""
                a second sender (session \(String(other, radix: 16))) on the connection of \(peer), which carries \
                session \(String(greeting.session, radix: 16)): two peers share one connection (bluetoothd before \
                5.76 hands every central one socket); the connection is closed, each session resumes on its next \
                connection
                """)
        }
        if carried { session.disconnected(expiry: expiry(of: session)) }
    }

    /// A connection's events, which belong to the session of its first hello: a `hello` of ANOTHER session
    /// ends them (`.disconnected`) before it is passed on. Two senders on one connection (bluetoothd before
    /// 5.76 hands every central's writes to one socket) would otherwise restart each other's session at the
    /// receiver (3.9: a new session ends the old one) and mix their message ids; closing the connection makes
    /// both reconnect, each resuming its own session.
    struct OneSessionEvents<Base: AsyncIteratorProtocol<LinkEvent, Never>>: AsyncIteratorProtocol {
        var base: Base
        let session: UInt64
        /// The other session whose hello ended the connection.
        private(set) var otherSession: UInt64?

        init(base: Base, session: UInt64) {
            self.base = base
            self.session = session
        }

        mutating func next(isolation actor: isolated (any Actor)?) async -> LinkEvent? {
            guard otherSession == nil, let event = await base.next(isolation: actor) else { return nil }
            if case let .packet(packet) = event, case let .hello(other, _)? = TransportControl(decoding: packet[...]),
               other != session {
                otherSession = other
                return .disconnected(reason: "a second sender's hello on this connection")
            }
            return event
        }

        mutating func next() async -> LinkEvent? {
            await next(isolation: nil)
        }
    }

    /// The sessions kept now, connected or waiting for their peer, in no particular order.
    public var currentSessions: [TransportSession] { registry.withLock { Array($0.sessions.values) } }

    /// Sends `message` to every session kept now, at once, each paced by its own link (a slow peer holds only
    /// its own send), and returns each session's outcome when all are done: success once that peer
    /// acknowledged the whole message, else the error its ``Transport/send(_:compress:timeout:)`` threw.
    public func send(
        toAll message: [UInt8], timeout: Duration? = nil
    ) async -> [(session: TransportSession, result: Result<Void, any Error>)] {
        await withTaskGroup(of: (session: TransportSession, result: Result<Void, any Error>).self) { group in
            for session in currentSessions {
                group.addTask {
                    do {
                        try await session.transport.send(message, timeout: timeout)
                        return (session, .success(()))
                    } catch {
                        return (session, .failure(error))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Ends `session` now: its Transport and its connection close, and the listener forgets it, so its peer's
    /// next connection, though it resumes the same session id, is a new session on ``sessions``. For a server
    /// that refused the peer (a failed handshake): kept, the closed session would take every reconnect of that
    /// peer until the resume window expired, and the peer could not be judged afresh.
    ///
    /// ```swift
    /// for await session in listener.sessions where !allowed(session.peer) {
    ///     await listener.end(session)
    /// }
    /// ```
    public func end(_ session: TransportSession) async {
        session.cancelExpiry()
        await remove(session)
    }

    /// Closes every session's Transport and ends ``sessions``; connections in ``accept(_:peer:)`` close. Each
    /// session first hands its link what it owes its peer (the acknowledgements of messages accepted, so a
    /// peer's `send` of the last one completes), all at once, waiting at most `flushTimeout` (zero: none).
    public func close(flushingWithin flushTimeout: Duration = .seconds(2)) async {
        let all = registry.withLock { registry in
            registry.closed = true
            return Array(registry.sessions.values)
        }
        sessions.finish()
        await withDiscardingTaskGroup { group in
            for session in all {
                session.cancelExpiry()
                group.addTask { await session.transport.close(flushingWithin: flushTimeout) }
            }
        }
    }

    // MARK: Connections

    /// What a new connection said before and with its hello.
    private struct Greeting {
        var maximumPacketSize: Int
        var hello: [UInt8]
        var session: UInt64
    }

    /// Reads until the peer's hello; nil when the connection ends first or sends `limit` other packets.
    private enum Awaited {
        case greeting(Greeting)
        case ended(UngreetedEnd)
    }

    private static func awaitHello<I: AsyncIteratorProtocol<LinkEvent, Never>>(_ events: inout I, limit: Int) async -> Awaited {
        var maximumPacketSize: Int?
        var ignored = 0
        while let event = await events.next(isolation: nil) {
            switch event {
            case let .connected(size), let .maximumPacketSizeChanged(size):
                maximumPacketSize = size
            case let .packet(packet):
                if let size = maximumPacketSize, case let .hello(session, _)? = TransportControl(decoding: packet[...]) {
                    return .greeting(Greeting(maximumPacketSize: size, hello: packet, session: session))
                }
                ignored += 1
                if ignored >= limit { return .ended(.tooManyPackets) }
            case .disconnected:
                return .ended(.gone)
            }
        }
        return .ended(.gone)
    }

    // MARK: Sessions

    /// The session `id` (the one kept for it, or a new one, published on ``sessions``); nil when there is
    /// no room or the listener closed.
    private func session(for id: UInt64, peer: String) async -> TransportSession? {
        enum Lookup {
            case existing(TransportSession)
            case created(TransportSession, evicted: TransportSession?)
            case refused(String)
        }
        let lookup = registry.withLock { registry -> Lookup in
            if registry.closed { return .refused("the listener is closed") }
            if let session = registry.sessions[id] { return .existing(session) }
            var evicted: TransportSession?
            if registry.sessions.count >= limits.maximumSessions {
                let idle = registry.sessions.values.compactMap { session in
                    session.disconnectedAt.map { (session, $0) }
                }
                guard let oldest = idle.min(by: { $0.1 < $1.1 })?.0 else {
                    return .refused("\(registry.sessions.count) sessions are connected (the most this listener keeps)")
                }
                registry.sessions[oldest.id] = nil
                evicted = oldest
            }
            let link = RelayLink(eventCapacity: limits.eventCapacity)
            let session = TransportSession(
                id: id, peer: peer, link: link, transport: Transport(link: link, options: options, logger: logger))
            registry.sessions[id] = session
            return .created(session, evicted: evicted)
        }
        switch lookup {
        case let .existing(session):
            return session
        case let .refused(reason):
            logger?.warning("refused a connection from \(peer): \(reason)")
            return nil
        case let .created(session, evicted):
            if let evicted {
                logger?.warning("dropped the session of \(evicted.peer), which left first, to make room for \(peer)")
                evicted.cancelExpiry()
                await evicted.transport.close()
            }
            do {
                try await sessions.push(session)
                return session
            } catch {
                await remove(session)
                return nil
            }
        }
    }

    /// A task that drops `session` once its peer stayed away for the resume window.
    private func expiry(of session: TransportSession) -> Task<Void, Never> {
        Task { [limits, logger] in
            do { try await Task.sleep(for: limits.resumeWindow) } catch { return }
            guard !session.isConnected else { return }
            logger?.info("the session of \(session.peer) expired: no reconnect within the resume window")
            await self.remove(session)
        }
    }

    private func remove(_ session: TransportSession) async {
        registry.withLock { registry in
            if registry.sessions[session.id] === session { registry.sessions[session.id] = nil }
        }
        await session.transport.close()
    }
}
