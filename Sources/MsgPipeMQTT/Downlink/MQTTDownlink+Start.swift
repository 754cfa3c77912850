public import MsgPipe

extension MQTTDownlink {
    /// A downlink delivering in the background (``start(serving:)`` as the peripheral,
    /// ``start(connectingTo:options:)`` as the central) until ``stop()``.
    public struct Delivery: Sendable {
        /// The server whose centrals get the messages (``start(serving:)``); nil as the central.
        public let server: PipeServer?
        let work: Task<Void, Never>
        let downlink: MQTTDownlink

        /// Stops delivering, closes the server and then the downlink: a message not yet acknowledged stays in the
        /// journal for the next start. Returns once the server is closed (its socket file gone, its advertisement
        /// unregistered), so a process may exit right after and leave nothing behind. Bounded as
        /// `PipeServer.close()` is: bluetoothd's unregistering and a central that takes nothing more hold it at
        /// most 2 s each.
        public func stop() async {
            work.cancel()
            await server?.close()
            await downlink.close()
        }
    }

    /// As the peripheral: serves centrals through `acceptor` and delivers to them as ``deliver(through:)``
    /// does, until ``Delivery/stop()``. Returns once it listens or advertises; throws what
    /// `PipeServer.serve(_:)` throws, and the downlink stays open then (close it).
    ///
    /// ```swift
    /// let delivery = try await downlink.start(serving: PipeAcceptor(at: .bluetooth("gw1"), options: options))
    /// await signals.wait()
    /// await delivery.stop()
    /// ```
    public func start(serving acceptor: any LinkAcceptor) async throws -> Delivery {
        let server = try await PipeServer.serve(acceptor)
        return Delivery(server: server, work: Task { await self.deliver(through: server) }, downlink: self)
    }

    /// As the central: connects to `peer` (as `MessagePipe.connect(to:options:)`, reconnecting as `options`
    /// say) and delivers every message to it as ``deliver(to:)`` does, until ``Delivery/stop()``. Throws what
    /// the connect throws, and the downlink stays open then (close it).
    ///
    /// ```swift
    /// let delivery = try await downlink.start(connectingTo: "kiosk", options: options)
    /// ```
    public func start(connectingTo peer: String, options: MessagePipe.Options) async throws -> Delivery {
        let pipe = try await MessagePipe.connect(to: peer, options: options)
        return Delivery(server: nil, work: Task { await self.deliver(to: pipe) }, downlink: self)
    }
}
