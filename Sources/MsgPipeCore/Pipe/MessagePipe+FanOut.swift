extension MessagePipe {
    /// Sends `message` to every pipe at once, each paced by its own link, and returns one result per pipe, in
    /// `pipes`' order: success means that pipe's peer acknowledged the whole message (msgpipe format). A pipe
    /// that fails, or stalls until `timeout`, fails alone: the others' deliveries neither wait for it nor are
    /// repeated because of it.
    public static func send(
        _ message: [UInt8], to pipes: [MessagePipe], timeout: Duration? = nil
    ) async -> [Result<Void, any Error>] {
        await concurrently(pipes) { pipe in
            do {
                try await pipe.send(message, timeout: timeout)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    /// Connects to every peer at once (`connect`: a pipe per peer, as `MessagePipe.connect(to:options:)` makes
    /// it) and sends messages `0..<count` to each with ``send(count:window:deadline:body:onAcknowledged:)``,
    /// each peer paced by its own link and reconnecting on its own; closes each pipe when its send ended. A peer
    /// that cannot be reached or fails holds back none of the others. `body` is asked once per peer and message.
    /// `onConnected` hears each pipe as it comes up; `onAcknowledged` each acknowledged message, with the peer
    /// as given and its pipe.
    package static func send(
        count: Int, toEach peers: [String], connect: @escaping @Sendable (String) async throws -> MessagePipe,
        window: SendWindow, deadline: ContinuousClock.Instant?, body: @escaping @Sendable (Int) throws -> [UInt8],
        onConnected: @escaping @Sendable (_ peer: String, _ pipe: MessagePipe) -> Void,
        onAcknowledged: @escaping @Sendable (_ peer: String, _ pipe: MessagePipe, _ index: Int, _ bytes: Int, _ elapsed: Duration) -> Void
    ) async -> DeliveryOutcome {
        DeliveryOutcome(await concurrently(peers) { peer in
            let pipe: MessagePipe
            do {
                pipe = try await connect(peer)
            } catch {
                return PeerDelivery(peer: peer, acknowledged: 0, failure: .connect(error))
            }
            onConnected(peer, pipe)
            let delivery = await pipe.deliver(count: count, as: peer, window: window, deadline: deadline, body: body) {
                onAcknowledged(peer, pipe, $0, $1, $2)
            }
            await pipe.close()
            return delivery
        })
    }

    /// ``send(count:window:deadline:body:onAcknowledged:)`` reported as `peer`'s ``PeerDelivery``.
    func deliver(
        count: Int, as peer: String, window: SendWindow, deadline: ContinuousClock.Instant?,
        body: (Int) throws -> [UInt8], onAcknowledged: (Int, Int, Duration) -> Void
    ) async -> PeerDelivery {
        let outcome = await send(count: count, window: window, deadline: deadline, body: body, onAcknowledged: onAcknowledged)
        return PeerDelivery(peer: peer, acknowledged: outcome.acknowledged, failure: outcome.failure.map { .send($0) })
    }

    /// `work` for every element at once; one result each, in `elements`' order.
    package static func concurrently<Element: Sendable, Outcome: Sendable>(
        _ elements: [Element], _ work: @escaping @Sendable (Element) async -> Outcome
    ) async -> [Outcome] {
        await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, element) in elements.enumerated() { group.addTask { (index, await work(element)) } }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Sends messages `0..<count` to every peer, as MsgPipe's `MessagePipe.send(count:toEach:options:...)` does,
    /// connecting each through `stack`: one ``PeerDelivery`` per peer, in `peers`' order; a peer that cannot be
    /// reached or fails holds back none of the others. `body` is asked once per peer and message.
    ///
    /// ```swift
    /// let outcome = await MessagePipe.send(count: files.count, toEach: ["door", "hall"], over: stack) { files[$0] }
    /// for delivery in outcome.failed { print(delivery.peer, delivery.acknowledged, delivery.failure!) }
    /// ```
    public static func send(
        count: Int, toEach peers: [String], over stack: any PipeStack, options: Options = Options(),
        window: SendWindow = SendWindow(), deadline: ContinuousClock.Instant? = nil,
        body: @escaping @Sendable (Int) throws -> [UInt8],
        onConnected: @escaping @Sendable (_ peer: String, _ pipe: MessagePipe) -> Void = { _, _ in },
        onAcknowledged: @escaping @Sendable (_ peer: String, _ pipe: MessagePipe, _ index: Int, _ bytes: Int, _ elapsed: Duration) -> Void = { _, _, _, _, _ in }
    ) async -> DeliveryOutcome {
        await send(
            count: count, toEach: peers, connect: { try await connect(to: $0, over: stack, options: options) },
            window: window, deadline: deadline, body: body, onConnected: onConnected, onAcknowledged: onAcknowledged)
    }
}

extension PipeServer {
    /// Waits for `centrals` centrals, then sends messages `0..<count` to each at once; a failing central holds
    /// back no other (serve with `waitingFor: centrals`). One ``PeerDelivery`` per central, in subscription order;
    /// the server stays open. Throws ``CentralsError`` when the server ended first (nothing was sent).
    ///
    /// ```swift
    /// let server = try await MessagePipe.serve(at: "kiosk", over: stack)
    /// let outcome = try await server.send(count: 1, toCentrals: 2) { _ in ticket }
    /// await server.close()
    /// ```
    public func send(
        count: Int, toCentrals centrals: Int, window: MessagePipe.SendWindow = MessagePipe.SendWindow(),
        deadline: ContinuousClock.Instant? = nil, body: @escaping @Sendable (Int) throws -> [UInt8],
        onAcknowledged: @escaping @Sendable (_ pipe: MessagePipe, _ index: Int, _ bytes: Int, _ elapsed: Duration) -> Void = { _, _, _, _ in }
    ) async throws(CentralsError) -> DeliveryOutcome {
        var pipes: [MessagePipe] = []
        for await pipe in self.centrals {
            options.note(.detail, "central \(pipe.peer) subscribed")
            pipes.append(pipe)
            if pipes.count == centrals { break }
        }
        guard pipes.count == centrals else {
            if let failure { throw .serverFailed(failure) }
            throw .tooFew(subscribed: pipes.count, expected: centrals)
        }
        return DeliveryOutcome(await MessagePipe.concurrently(pipes) { pipe in
            await pipe.deliver(count: count, as: pipe.peer, window: window, deadline: deadline, body: body) {
                onAcknowledged(pipe, $0, $1, $2)
            }
        })
    }
}

extension PipeServer {
    /// Serves through `acceptor` until `centrals` centrals subscribed, sends them messages `0..<count` as
    /// ``send(count:toCentrals:window:deadline:body:onAcknowledged:)`` does, then closes the server: a peripheral
    /// that delivers and leaves. The acceptor's options must allow `centrals` at once (`maximumCentrals`).
    /// `onServing` hears the server once it listens or advertises. Throws ``CentralsError`` (nothing was sent):
    /// `serverFailed` with what ``serve(_:waitingFor:connections:)`` threw or the server's failure, `tooFew`
    /// when it stopped before enough centrals subscribed.
    ///
    /// ```swift
    /// let acceptor = stack.acceptor(at: .bluetooth("kiosk"), options: options)
    /// let outcome = try await PipeServer.send(count: 1, toCentrals: 2, through: acceptor) { _ in ticket }
    /// ```
    public static func send(
        count: Int, toCentrals centrals: Int, through acceptor: any LinkAcceptor,
        window: MessagePipe.SendWindow = MessagePipe.SendWindow(), deadline: ContinuousClock.Instant? = nil,
        body: @escaping @Sendable (Int) throws -> [UInt8], onServing: (PipeServer) -> Void = { _ in },
        onAcknowledged: @escaping @Sendable (_ pipe: MessagePipe, _ index: Int, _ bytes: Int, _ elapsed: Duration) -> Void = { _, _, _, _ in }
    ) async throws(CentralsError) -> DeliveryOutcome {
        let server: PipeServer
        do {
            server = try await serve(acceptor, waitingFor: centrals)
        } catch {
            throw .serverFailed(error)
        }
        onServing(server)
        let outcome: Result<DeliveryOutcome, CentralsError>
        do throws(CentralsError) {
            outcome = .success(try await server.send(
                count: count, toCentrals: centrals, window: window, deadline: deadline, body: body, onAcknowledged: onAcknowledged))
        } catch {
            outcome = .failure(error)
        }
        await server.close()
        return try outcome.get()
    }
}
