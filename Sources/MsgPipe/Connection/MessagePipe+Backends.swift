
// The entry points that pick msgpipe's own backends: connecting through the stack `PipeStacks.resolve` picks,
// advertising and listening through `PipeAcceptor`.
extension MessagePipe {
    /// Connects as the central to `peer`, an advertised name (found by scanning), `AA:BB:CC:DD:EE:FF`
    /// (`/random` for a random address), or `unix:PATH`; discovers the profile and subscribes. Transient
    /// failures are retried within `Options.connectTimeout`. After a drop the pipe reconnects with
    /// `Options.reconnect`'s backoff and Transport resumes where it stopped.
    ///
    /// With `Options.keys` the end-to-end handshake runs before this returns.
    ///
    /// Throws `BluetoothError`/`BlueZError`/`ATTError` when no connection could be made,
    /// `MessagePipeError.formatMismatch(_:)` when the peer's info characteristic names other formats, and
    /// `MessagePipeError.notAuthenticated(_:)` when the peer refused our key or holds another one.
    public static func connect(to peer: String, options given: Options = Options()) async throws -> MessagePipe {
        try await connect(to: peer, over: nil, options: given)
    }

    /// ``connect(to:options:)`` over `stack` (nil: the stack ``PipeStacks/resolve(_:options:)`` picks).
    public static func connect(to peer: String, over stack: (any PipeStack)?, options given: Options = Options()) async throws -> MessagePipe {
        try await connect(to: peer, options: given) { address, options in PipeConnector(to: address, over: stack, options: options) }
    }

    /// Advertises `name` over Bluetooth with the profile's service and serves centrals, up to
    /// `Options.maximumCentrals` at once. Returns once advertising; each central comes out of
    /// `PipeServer.centrals` as a pipe of its own.
    ///
    /// ```swift
    /// let server = try await MessagePipe.advertise(name: "kiosk")
    /// for await central in server.centrals {
    ///     Task { for await message in central.messages { print(central.peer, message.bytes.count) } }
    /// }
    /// ```
    public static func advertise(name: String, options: Options = Options()) async throws -> PipeServer {
        try await PipeServer.serve(PipeAcceptor(at: .bluetooth(name), options: options))
    }

    /// Serves at `place`: `unix:PATH` listens on that socket, anything else is the name to advertise over
    /// Bluetooth (``advertise(name:options:)``).
    public static func serve(at place: String, options: Options = Options()) async throws -> PipeServer {
        switch PipeAddress(place) {
        case let .unix(path): try await listen(path: path, options: options)
        case let .bluetooth(name): try await advertise(name: name, options: options)
        }
    }

    /// Listens on a UNIX SEQPACKET socket at `path` (the same GATT without a radio), as
    /// ``advertise(name:options:)`` does over Bluetooth.
    public static func listen(path: String, options: Options = Options()) async throws -> PipeServer {
        try await PipeServer.serve(PipeAcceptor(at: .unix(path: path), options: options))
    }

    /// Connects to every peer at once, each as ``connect(to:options:)`` does on its own: a pipe per peer that
    /// reconnects and resumes by itself. Returns one result per peer, in `peers`' order. A peer that cannot be
    /// reached fails alone and never holds the others back: over Bluetooth the connects take turns on the
    /// adapter (`ConnectQueue`, one LE connection creation at a time), each for its own attempt only.
    ///
    /// ```swift
    /// let pipes = await MessagePipe.connect(toEach: ["door", "hall", "lobby"]).compactMap { try? $0.get() }
    /// let results = await MessagePipe.send(Array("open".utf8), to: pipes)   // one Result per pipe
    /// for (pipe, result) in zip(pipes, results) { print(pipe.peer, result) }
    /// ```
    public static func connect(toEach peers: [String], options: Options = Options()) async -> [Result<MessagePipe, any Error>] {
        await concurrently(peers) { peer in
            do {
                return .success(try await connect(to: peer, options: options))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Sends messages `0..<count` to every peer at once, each on its own link with its own reconnects, and
    /// closes each pipe when its send ends. A failing peer holds back no other: one `PeerDelivery` per peer, in
    /// `peers`' order. `body` is asked once per peer and message.
    ///
    /// ```swift
    /// let outcome = await MessagePipe.send(count: 1, toEach: ["door", "hall"]) { _ in firmware }
    /// for delivery in outcome.failed { print(delivery.peer, delivery.failure!) }
    /// ```
    public static func send(
        count: Int, toEach peers: [String], options: Options = Options(), window: SendWindow = SendWindow(),
        deadline: ContinuousClock.Instant? = nil, body: @escaping @Sendable (Int) throws -> [UInt8],
        onConnected: @escaping @Sendable (_ peer: String, _ pipe: MessagePipe) -> Void = { _, _ in },
        onAcknowledged: @escaping @Sendable (_ peer: String, _ pipe: MessagePipe, _ index: Int, _ bytes: Int, _ elapsed: Duration) -> Void = { _, _, _, _, _ in }
    ) async -> DeliveryOutcome {
        await send(
            count: count, toEach: peers, connect: { try await connect(to: $0, options: options) }, window: window,
            deadline: deadline, body: body, onConnected: onConnected, onAcknowledged: onAcknowledged)
    }
}

extension PeerPipes {
    /// Connects to every peer at once, each as `MessagePipe.connect(to:options:)` does, over the backend
    /// `options` picks (``MessagePipe/connect(toEach:options:)``): the connected pipes with the peer each was
    /// asked for, and the unreachable peers with why.
    ///
    /// ```swift
    /// let peers = await PeerPipes.connect(toEach: ["door", "hall"], options: options)
    /// for failure in peers.unreachable { print("cannot connect to \(failure.peer): \(failure.error)") }
    /// ```
    public static func connect(toEach peers: [String], options: MessagePipe.Options = .init()) async -> PeerPipes {
        PeerPipes(peers: peers, results: await MessagePipe.connect(toEach: peers, options: options))
    }
}
