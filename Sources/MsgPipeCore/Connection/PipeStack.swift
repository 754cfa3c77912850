package import Backpressure
package import BluetoothCore
public import GATT
package import Transport

/// What a backend offers a pipe: a central's link that connects (and reconnects) itself, and the
/// peripheral's accept loop. A backend is a module that depends on MsgPipeCore and has a type that conforms,
/// handed to ``MessagePipe/connect(to:over:options:)`` and ``MessagePipe/serve(at:over:options:)``. MsgPipe's
/// own (`KernelStack`, `BluetoothdStack`, `SocketStack`) are picked by `PipeStacks.resolve(_:options:)` for an
/// address and ``MessagePipe/Options/backend``; a stack that can scan is also MsgPipe's `ScanningStack`.
///
/// ```swift
/// let pipe = try await MessagePipe.connect(to: "kiosk", over: stack, options: options)
/// let server = try await MessagePipe.serve(at: "kiosk", over: stack, options: options)
/// ```
public protocol PipeStack: Sendable {
    /// A new central link to `address`, not yet connected: ``PipeConnector`` connects it, and again after
    /// each drop. Throws when this stack cannot reach `address` at all (the backend is missing, the options
    /// ask for what it cannot do).
    func centralLink(to address: PipeAddress, options: MessagePipe.Options) async throws -> any CentralLink

    /// The peripheral's accept loop at `address` (a name to advertise, or a place this stack listens on).
    func acceptor(at address: PipeAddress, options: MessagePipe.Options) -> any LinkAcceptor
}

/// A central's link that can connect to its peer, and connect again after a drop: the same link carries
/// one connection after another, so Transport resumes over it.
public protocol CentralLink: PipeLink {
    /// One connection attempt, to be done by `deadline`; returns the peer's description. Throws the
    /// backend's error; ``PipeConnector`` tries again within its connect timeout where the error is transient
    /// (a peer not found yet, a connect that timed out).
    func connect(until deadline: ContinuousClock.Instant) async throws -> String
}

/// A peripheral's accept loop: hands each central's link to a handler, several at once.
public protocol LinkAcceptor: Sendable {
    /// The options it serves with (format, limits, notes).
    var options: MessagePipe.Options { get }

    /// True when the accept loop returns promptly once its task is cancelled, so that closing a server may
    /// wait for it (a UNIX socket's does; a kernel accept blocks on a thread of its own).
    var endsOnCancellation: Bool { get }

    /// Accepts centrals and runs `handle` for each in a child task, up to `maximumConcurrent` at once, until
    /// `connections` were accepted (nil: until cancelled); returns once the last `handle` returned. The link is
    /// connected when `handle` starts and closed after it returns. `onReady` says where it listens or
    /// advertises. `centralsAtOnce` above 1 fails at once where the backend serves one central at a time.
    /// `unnumbered`: a plain format is carried (advice where the backend may reorder values).
    func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws

    /// Stops accepting at once, from any thread: no further central arrives.
    func stop()

    /// Stops accepting as ``stop()`` does, first taking the advertisement away where the stack needs a round
    /// trip to do so cleanly (bluetoothd: at most 2 s). What a graceful shutdown calls; the default is ``stop()``.
    func close() async
}

extension LinkAcceptor {
    /// ``stop()``: nothing this acceptor set up outside the process needs a round trip to go.
    public func close() async { stop() }
}

/// A stack's central link made of a link and how to connect it once.
package struct ConnectingLink: CentralLink {
    package let base: any PipeLink
    package let attempt: @Sendable (ContinuousClock.Instant) async throws -> String

    package init(base: any PipeLink, attempt: @escaping @Sendable (ContinuousClock.Instant) async throws -> String) {
        self.base = base
        self.attempt = attempt
    }

    package var events: BoundedAsyncQueue<LinkEvent, Never> { base.events }
    package func send(_ packet: [UInt8]) async throws { try await base.send(packet) }
    package func close() async { await base.close() }
    package func renewIncoming() async { await base.renewIncoming() }
    package var carrier: Carrier { base.carrier }
    package var peerInfo: MsgPipeServiceInfo? { base.peerInfo }
    package var canConfirm: Bool { base.canConfirm }
    package func sendConfirmed(_ packet: [UInt8]) async throws { try await base.sendConfirmed(packet) }
    package func disconnect() async { await base.disconnect() }
    package var phy: LinkPHY? { base.phy }
    package func connect(until deadline: ContinuousClock.Instant) async throws -> String { try await attempt(deadline) }
}
