import Synchronization
public import GATT

/// The peripheral for `options.backend`: it runs the acceptor ``PipeStacks/acceptor(at:options:)`` picks
/// (``SocketAcceptor``, ``BluetoothdAcceptor`` or ``KernelAcceptor``); `MessagePipe.advertise(name:options:)` uses it.
///
/// ```swift
/// let acceptor = PipeAcceptor(at: .bluetooth("kiosk"), options: options)
/// try await acceptor.acceptLinks(info: options.serviceInfo()) { link, peer in
///     await TransportListener().accept(link, peer: peer)
/// }
/// ```
public final class PipeAcceptor: LinkAcceptor {
    public let address: PipeAddress
    public let options: MessagePipe.Options
    /// The acceptor picked once the loop started, and whether ``stop()`` came first.
    private let picked = Mutex<(stopped: Bool, acceptor: (any LinkAcceptor)?)>((false, nil))

    /// `address`: `.unix(path:)` listens on that socket; `.bluetooth(name)` advertises `name`.
    public init(at address: PipeAddress, options: MessagePipe.Options) {
        self.address = address
        self.options = options
    }

    /// True on a UNIX socket, whose accept ends on cancellation; a kernel accept blocks on a thread of its own.
    public var endsOnCancellation: Bool {
        if case .unix = address { true } else { false }
    }

    /// Removes the socket file or stops advertising at once, from any thread (a signal handler's task): no
    /// further central can arrive, also when the loop has not picked its backend yet. The accept loop itself
    /// ends when its task is cancelled.
    public func stop() {
        picked.withLock { state in
            state.stopped = true
            return state.acceptor
        }?.stop()
    }

    /// ``stop()``, after the picked acceptor took its advertisement away (`LinkAcceptor.close()`): what a
    /// graceful shutdown calls.
    public func close() async {
        let acceptor = picked.withLock { state in
            state.stopped = true
            return state.acceptor
        }
        await acceptor?.close()
    }

    /// `LinkAcceptor`'s accept loop, run by the acceptor ``PipeStacks/acceptor(at:options:)`` picks for the
    /// options' backend. Throws what picking throws (`BlueZError` when bluez was asked for and bluetoothd cannot
    /// be reached) and what the picked acceptor throws.
    public func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int? = nil, maximumConcurrent: Int = 1, centralsAtOnce: Int = 1,
        unnumbered: Bool = false, onReady: (String) -> Void = { _ in },
        handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        let acceptor = try await PipeStacks.acceptor(at: address, options: options)
        let stopped = picked.withLock { state in
            state.acceptor = acceptor
            return state.stopped
        }
        if stopped { acceptor.stop() }
        try await acceptor.acceptLinks(
            info: info, connections: connections, maximumConcurrent: maximumConcurrent, centralsAtOnce: centralsAtOnce,
            unnumbered: unnumbered, onReady: onReady, handle: handle)
    }
}
