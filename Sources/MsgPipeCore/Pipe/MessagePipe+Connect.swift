import GATT
import Synchronization
import Transport

extension MessagePipe {
    /// Connects as the central to `peer` over `stack`: the backend's central link, connected and reconnected
    /// as `MessagePipe.connect(to:options:)` (MsgPipe) does over the stack MsgPipe picks (`PipeStacks.resolve`).
    /// Discovers the profile and subscribes; transient failures are retried within ``Options/connectTimeout``;
    /// after a drop the pipe reconnects with ``Options/reconnect``'s backoff and Transport resumes. With
    /// ``Options/keys`` the end-to-end handshake runs before this returns. Throws the backend's error when no
    /// connection could be made, ``MessagePipeError/formatMismatch(_:)`` when the peer's info characteristic
    /// names other formats, ``MessagePipeError/notAuthenticated(_:)`` when the peer refused our key (final: no
    /// retry), and ``MessagePipeError/linkLost(attempts:)`` when the peer ended ``Options/reconnect``'s
    /// attempts of connections in a row before the handshake answered (a peripheral waiting out its handshake
    /// backoff refuses that way; each such connection counts as a failed attempt, so the waits grow).
    ///
    /// ```swift
    /// let pipe = try await MessagePipe.connect(to: "kiosk", over: stack, options: options)
    /// ```
    public static func connect(to peer: String, over stack: any PipeStack, options given: Options = Options()) async throws -> MessagePipe {
        try await connect(to: peer, options: given) { address, options in PipeConnector(to: address, over: stack, options: options) }
    }

    /// Connects as ``connect(to:over:options:)`` does, through the connector `makeConnector` makes for the
    /// peer's address and the pipe's options.
    package static func connect(
        to peer: String, options given: Options, makeConnector: (PipeAddress, Options) -> PipeConnector
    ) async throws -> MessagePipe {
        if given.keys != nil, given.format != .msgpipe {
            throw MessagePipeError.keysUnusable("end-to-end keys need the msgpipe format")
        }
        let observation = LinkObservation(onPeerUpdate: given.onPeerParameterUpdate)
        let options = given.observingPacketSizes(observation)
        var connector = makeConnector(PipeAddress(peer), options)
        if case .bluetooth = PipeAddress(peer) { connector.observation = observation }
        let link = try await connector.makeLink()
        let attempts = options.reconnect.attempts == .max ? nil : options.reconnect.attempts
        let transportBox = Mutex<Transport?>(nil)
        let connections = Atomic<Int>(0)
        // With keys the pipe is established by its handshake: a connection the peer ends before counts as a
        // failed attempt (a refusal, PROTOCOL.md 5.7), so the reconnects back off and `attempts` ends them.
        let reconnector = Reconnector(connector, link: link, attempts: attempts, awaitingEstablishment: options.keys != nil, onReconnected: { _ in
            connections.add(1, ordering: .relaxed)
        }) {
            await transportBox.withLock { $0 }?.close()
        }
        let transport: Transport?
        if options.format == .msgpipe {
            transport = observedTransport(over: link, options: options) { event in
                options.onLinkEvent(event, link)
                if case let .disconnected(reason) = event { reconnector.dropped(reason) }
            }
            transportBox.withLock { $0 = transport }
        } else {
            transport = nil
        }
        let description: String
        do {
            description = try await connector.connect(link)
            connections.add(1, ordering: .relaxed)
            if let info = link.peerInfo, !info.formats.contains(options.format.advertised) {
                throw MessagePipeError.formatMismatch(options.format)
            }
        } catch {
            observation.stop()
            await reconnector.stop()
            await transport?.close()
            await link.close()
            throw error
        }
        if let transport {
            var secured: Secured?
            if let keys = options.keys {
                do {
                    let channel = try await initiate(keys, over: transport, options: options)
                    reconnector.established()
                    renewWhenForgotten(channel.channel, over: transport, reconnector: reconnector, options: options)
                    secured = channel
                } catch {
                    observation.stop()
                    await reconnector.stop()
                    await transport.close()
                    await link.close()
                    throw reconnector.hasGivenUp ? MessagePipeError.linkLost(attempts: attempts ?? 0) : error
                }
            }
            return MessagePipe(
                peer: description, transport: transport, link: link, reconnector: reconnector, peerInfo: link.peerInfo,
                secured: secured, connections: { connections.load(ordering: .relaxed) },
                observation: connector.observation, preferredPHY: options.backend.kernelOptions?.connectionParameters?.phy)
        }
        // Plain formats: the first event of a connected link says its packet size.
        var events = link.events.makeAsyncIterator()
        var packetSize = options.format.minimumPacketSize
        while let event = await events.next() {
            if case let .connected(size) = event {
                packetSize = size
                break
            }
        }
        return MessagePipe(
            peer: description, format: options.format, link: link, events: link.events, packetSize: packetSize,
            reconnector: reconnector, options: options, connections: { connections.load(ordering: .relaxed) },
            observation: connector.observation)
    }

    /// Runs a new handshake on `transport` each time the peer's Transport session changes (PROTOCOL.md 6.8: it
    /// restarted, or our session expired there, while ours resumed), until the transport closes. Until it is done
    /// the reconnector counts a connection the peer ends as a failure; a refusal of our key is final: the pipe
    /// stops reconnecting and closes (its sends throw ``MessagePipeError/notAuthenticated(_:)``).
    private static func renewWhenForgotten(
        _ channel: SecureChannel, over transport: Transport, reconnector: Reconnector, options: Options
    ) {
        Task {
            var seen = 0
            while let changes = await transport.peerSessionChange(after: seen) {
                seen = changes
                reconnector.awaitEstablishment()
                do {
                    try await channel.renewIfPeerChanged()
                    reconnector.established()
                } catch let error as SecureError where MessagePipeError(refusal: error) != nil {
                    options.note(.warning, "the peer forgot the end-to-end session and refused a new one: \(error)")
                    await reconnector.stop()
                    await transport.close()
                    return
                } catch {
                    options.note(.reconnect, "the peer forgot the end-to-end session; a new handshake failed: \(error)")
                }
            }
        }
    }

    /// A Transport over `link` that shows `onEvent` each event and the options' `onPacketSent` each packet sent.
    private static func observedTransport(
        over link: some PipeLink, options: Options, onEvent: @escaping @Sendable (LinkEvent) -> Void
    ) -> Transport {
        Transport(
            link: ObservedLink(link, onEvent: onEvent, onSent: options.onPacketSent), options: options.transportOptions(),
            logger: options.logger)
    }

    /// Serves at `place` over `stack`: its accept loop hands each central's link to the returned server, as
    /// `serve(at:options:)` (MsgPipe) does over the stack the address picks.
    ///
    /// ```swift
    /// let server = try await MessagePipe.serve(at: "kiosk", over: KernelStack(), options: options)
    /// for await central in server.centrals { print(central.peer) }
    /// ```
    public static func serve(at place: String, over stack: any PipeStack, options: Options = Options()) async throws -> PipeServer {
        try await PipeServer.serve(stack.acceptor(at: PipeAddress(place), options: options))
    }
}

extension MessagePipe.Options {
    /// These options with every link event's packet size also told to `observation`.
    fileprivate func observingPacketSizes(_ observation: LinkObservation) -> Self {
        var options = self
        let onLinkEvent = onLinkEvent
        options.onLinkEvent = { event, link in
            if case let .connected(size) = event { observation.packetSize(size) }
            if case let .maximumPacketSizeChanged(size) = event { observation.packetSize(size) }
            onLinkEvent(event, link)
        }
        return options
    }
}
