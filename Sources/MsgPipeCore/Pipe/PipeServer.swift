public import Backpressure
import GATT
import Synchronization
import Transport
import Secure

/// The peripheral's side: advertises (or listens on a socket) and hands out one ``MessagePipe`` per central.
/// With the msgpipe format a central that reconnects gets its pipe back (Transport resumes), not a new one.
/// Made by `MessagePipe.advertise(name:options:)` and `MessagePipe.listen(path:options:)`.
public final class PipeServer: Sendable {
    /// Where it serves: "advertising 'kiosk' on hci0 (...)" or "listening on unix:PATH".
    public var description: String { state.withLock { $0.description } }
    /// One pipe per central, as each subscribes. Ends when the server is closed or fails.
    public let centrals: BoundedAsyncQueue<MessagePipe, Never>
    /// Why serving ended, once it did (nil while serving and after ``close()``).
    public var failure: (any Error)? { state.withLock { $0.failure } }

    /// The centrals connected right now: a central whose data rides an L2CAP channel beside its GATT connection
    /// counts once.
    public var connectedCentrals: Int { state.withLock { $0.connected.count } }

    /// With end-to-end keys: handshakes refused so far (an unknown or revoked key, a bad or late handshake, a
    /// central still waiting out ``MessagePipe/Options/handshakeBackoff``). Each one was logged as a warning
    /// naming the central; nothing it sent was delivered.
    public var refusedHandshakes: Int { state.withLock { $0.refusedHandshakes } }

    private let acceptor: any LinkAcceptor
    /// The options it serves with (its acceptor's).
    var options: MessagePipe.Options { acceptor.options }
    private struct State {
        var description = ""
        var failure: (any Error)?
        var task: Task<Void, Never>?
        var listener: TransportListener?
        /// Connections now, by central (``centralKey(_:)``).
        var connected: [String: Int] = [:]
        var unnamed = 0
        var refusedHandshakes = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    private init(acceptor: any LinkAcceptor, centrals: BoundedAsyncQueue<MessagePipe, Never>) {
        self.acceptor = acceptor
        self.centrals = centrals
    }

    /// Stops accepting, ends every central's pipe, and removes the socket file or the advertisement (through
    /// bluetoothd: unregistered first, at most 2 s). Each central's session first hands its link the
    /// acknowledgements it owes (messages accepted just before), waiting at most 2 s for a link that is not ready.
    public func close() async {
        await acceptor.close()
        let (task, listener) = state.withLock { ($0.task, $0.listener) }
        // The sessions first, while their connections are still served; then the accept loop.
        await listener?.close()
        centrals.finish()
        task?.cancel()
        // A kernel accept blocks on a thread of its own until the process ends; a socket's ends on cancellation.
        if acceptor.endsOnCancellation { await task?.value }
    }

    /// Returns once no central is connected, or after `timeout`.
    public func waitUntilNoCentrals(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let idle = self.state.withLock { state -> Bool in
                        if state.connected.isEmpty { return true }
                        state.idleWaiters.append(continuation)
                        return false
                    }
                    if idle { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            // The waiter that lost the race is resumed when the centrals leave, or left to the process's end.
            self.state.withLock { state in
                let waiters = state.idleWaiters
                state.idleWaiters = []
                return waiters
            }.forEach { $0.resume() }
        }
    }

    /// The central a connection's `peer` names: its Bluetooth address, which its GATT connection and its channel
    /// share (the backends describe a peer as "AA:BB:CC:DD:EE:FF" or "AA:BB:CC:DD:EE:FF (public)"); nil for any
    /// other peer (a UNIX socket's), which is a central of its own.
    static func centralAddress(_ peer: String) -> String? {
        BluetoothAddress(peer.prefix(17)).map { "\($0)" }
    }

    private func connectionStarted(_ peer: String) -> String {
        state.withLock { state in
            let key: String
            if let address = Self.centralAddress(peer) {
                key = address
            } else {
                state.unnamed += 1
                key = "\(peer)#\(state.unnamed)"
            }
            state.connected[key, default: 0] += 1
            return key
        }
    }

    private func connectionEnded(_ key: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.connected[key, default: 1] -= 1
            if state.connected[key] == 0 { state.connected[key] = nil }
            guard state.connected.isEmpty else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Serves centrals through `acceptor` (its options say the format, limits and notes), up to
    /// ``MessagePipe/Options/maximumCentrals`` at once. Returns once it listens or advertises. `waitingFor`
    /// above 1 says the caller needs that many centrals at once: through a bluetoothd that serves one at a time
    /// (before 5.76) that fails at once, with the remedy. After `connections` centrals were served (nil: never)
    /// it stops accepting, and ``centrals`` ends once their messages were delivered.
    public static func serve(
        _ acceptor: any LinkAcceptor, waitingFor centralsAtOnce: Int = 1, connections: Int? = nil
    ) async throws -> PipeServer {
        let options = acceptor.options
        if options.keys != nil, options.format != .msgpipe {
            throw MessagePipeError.keysUnusable("end-to-end keys need the msgpipe format")
        }
        let centrals = BoundedAsyncQueue<MessagePipe, Never>(capacity: max(1, options.maximumCentrals))
        let ready = ReadyOnce()
        let server = PipeServer(acceptor: acceptor, centrals: centrals)
        let listener = options.format == .msgpipe ? Self.listener(options, server: server) : nil
        server.state.withLock { $0.listener = listener }
        let plainConnections = Atomic<Int>(0)
        let task = Task {
            do {
                try await acceptor.acceptLinks(
                    info: options.serviceInfo(), connections: connections, maximumConcurrent: max(1, options.maximumCentrals),
                    centralsAtOnce: centralsAtOnce, unnumbered: options.format != .msgpipe, onReady: { ready.resolve(.success($0)) }
                ) { link, peer in
                    let central = server.connectionStarted(peer)
                    defer { server.connectionEnded(central) }
                    options.note(.detail, "connection from \(peer)")
                    if let listener {
                        await Self.accept(link, peer: peer, into: listener, options: options)
                    } else {
                        let number = plainConnections.add(1, ordering: .relaxed).newValue
                        await Self.servePlain(link, peer: peer, number: number, options: options, into: centrals)
                    }
                    options.note(.detail, "connection from \(peer) ended")
                }
            } catch {
                if !Task.isCancelled { server.state.withLock { $0.failure = error } }
                ready.resolve(.failure(error))
            }
            ready.resolve(.failure(MessagePipeError.closed))  // ended before it was ready
            // Every central was served: the sessions end once what they delivered was read.
            await listener?.close()
            centrals.finish()
        }
        let description: String
        do {
            description = try await ready.value
        } catch {
            await task.value
            throw error
        }
        server.state.withLock {
            $0.task = task
            $0.description = description
        }
        if let listener {
            let backoff = HandshakeBackoff(policy: options.handshakeBackoff)
            Task {
                await withDiscardingTaskGroup { group in
                    for await session in listener.sessions {
                        guard let keys = options.keys else {
                            let pipe = MessagePipe(
                                peer: session.peer, transport: session.transport, link: nil, reconnector: nil,
                                peerInfo: nil, connections: { session.latestConnection }, isConnected: { session.isConnected })
                            do { try await centrals.push(pipe) } catch { return }
                            continue
                        }
                        // Each central's handshake apart: a slow or silent one holds nobody else up.
                        group.addTask {
                            // Refused, but its wait is not made longer: a central that backs off gets in
                            // once it is over (a refusal costs no cryptography, so a hasty one costs little).
                            if let wait = backoff.remaining(for: session.peer) {
                                let failures = backoff.failures(of: session.peer)
                                let why = "\(failures) handshakes failed in a row, it waits \(wait.components.seconds + 1) s more"
                                server.refused(session.peer, MessagePipeError.notAuthenticated(why), options: options)
                                options.note(.warning, "refused \(session.peer) without a handshake: \(why)")
                                // Forgotten, not just closed: its next connection is judged afresh.
                                await listener.end(session)
                                return
                            }
                            let secured: MessagePipe.Secured
                            do {
                                secured = try await MessagePipe.accept(
                                    keys, over: session.transport, peer: session.peer, options: options)
                            } catch {
                                server.refused(session.peer, error, options: options)
                                backoff.failed(session.peer)
                                options.note(.warning, "refused \(session.peer): \(error)")
                                await listener.end(session)
                                return
                            }
                            backoff.succeeded(session.peer)
                            let pipe = MessagePipe(
                                peer: session.peer, transport: session.transport, link: nil, reconnector: nil,
                                peerInfo: nil, secured: secured, connections: { session.latestConnection },
                                isConnected: { session.isConnected })
                            do { try await centrals.push(pipe) } catch { await pipe.close() }
                        }
                    }
                }
            }
        }
        return server
    }

    /// Transport's sessions: room for every central plus as many that left and may come back to resume; a
    /// connection without a hello within ``MessagePipe/Options/helloTimeout`` is closed. With keys a connection
    /// that sends nothing within that or the handshake timeout (or only other packets) is a refused handshake;
    /// one its peer closed first is not (a central's idle ATT connection beside its channel).
    private static func listener(_ options: MessagePipe.Options, server: PipeServer) -> TransportListener {
        var limits = TransportListener.Limits()
        limits.maximumSessions = 2 * max(1, options.maximumCentrals)
        limits.resumeWindow = options.resumeWindow
        limits.helloTimeout = options.helloTimeout
        guard options.keys != nil else {
            return TransportListener(options: options.transportOptions(), limits: limits, logger: options.logger)
        }
        limits.helloTimeout = min(options.helloTimeout, options.handshakeTimeout)
        let (seconds, packets) = (limits.helloTimeout.components.seconds, limits.packetsBeforeHello)
        return TransportListener(options: options.transportOptions(), limits: limits, logger: options.logger) { peer, end in
            let (reason, why): (String, String)
            switch end {
            case .gone: return
            case .silent: (reason, why) = ("no handshake within \(seconds) s", "it sent nothing within \(seconds) s")
            case .tooManyPackets: (reason, why) = ("no handshake in its first \(packets) packets", "it sent \(packets) packets and no hello")
            }
            server.refused(peer, SecureError.handshakeFailed(reason), options: options)
            options.note(.warning, "refused \(peer): \(why)")
        }
    }

    /// Gives `link` to `listener`, its events shown to ``MessagePipe/Options/onLinkEvent`` and its packets to
    /// ``MessagePipe/Options/onPacketSent``; returns once the listener is done with it.
    private static func accept(
        _ link: some PipeLink, peer: String, into listener: TransportListener, options: MessagePipe.Options
    ) async {
        let observed = ObservedLink(link, onEvent: { options.onLinkEvent($0, link) }, onSent: options.onPacketSent)
        await listener.accept(observed, peer: peer)
    }

    /// Counts a refused handshake and tells ``MessagePipe/Options/onRefusedHandshake``.
    private func refused(_ peer: String, _ reason: any Error, options: MessagePipe.Options) {
        state.withLock { $0.refusedHandshakes += 1 }
        options.onRefusedHandshake(peer, reason)
    }

    /// A plain-format central: its pipe once it subscribed (the link's first `.connected`) or wrote (a central
    /// that only writes, as a phone sending does), served until its link's events end. A central that only
    /// looks at the services and leaves gets none.
    private static func servePlain(
        _ link: any PipeLink, peer: String, number: Int, options: MessagePipe.Options,
        into centrals: BoundedAsyncQueue<MessagePipe, Never>
    ) async {
        var events = link.events.makeAsyncIterator()
        var packetSize: Int?
        var written: [UInt8]?
        wait: while let event = await events.next() {
            switch event {
            case let .connected(size):
                packetSize = size
                break wait
            case let .packet(packet):
                written = packet
                break wait
            case .maximumPacketSizeChanged, .disconnected:
                continue
            }
        }
        guard packetSize != nil || written != nil else { return }
        let ended = AsyncStream<Void>.makeStream()
        let tracked = EndTracking(base: link.events, first: written.map { [.packet($0)] } ?? [], onEnd: {
            ended.continuation.finish()
        })
        let pipe = MessagePipe(
            peer: peer, format: options.format, link: link, events: tracked, packetSize: packetSize, reconnector: nil,
            options: options, connections: { number })
        do { try await centrals.push(pipe) } catch { return }
        for await _ in ended.stream {}
    }
}

/// Resolves once with the first result; later ones are ignored.
private final class ReadyOnce: Sendable {
    private let state = Mutex<(result: Result<String, any Error>?, waiter: CheckedContinuation<String, any Error>?)>((nil, nil))

    func resolve(_ result: Result<String, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<String, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    var value: String {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let result = state.withLock { state -> Result<String, any Error>? in
                    if state.result == nil { state.waiter = continuation }
                    return state.result
                }
                if let result { continuation.resume(with: result) }
            }
        }
    }
}

/// A link's events, after `first` (events already taken from it), that say when they end (the central left).
struct EndTracking<Base: AsyncSequence<LinkEvent, Never> & Sendable>: AsyncSequence, Sendable {
    typealias Element = LinkEvent
    typealias Failure = Never
    let base: Base
    let first: [LinkEvent]
    let onEnd: @Sendable () -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var first: [LinkEvent]
        let onEnd: @Sendable () -> Void

        mutating func next() async -> LinkEvent? {
            if !first.isEmpty { return first.removeFirst() }
            let event = await base.next(isolation: nil)
            if event == nil { onEnd() }
            return event
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), first: first, onEnd: onEnd)
    }
}
