import Backpressure
import BLELink
import GATT
import Synchronization
import Transport

/// What msgpipe's acceptors (``KernelAcceptor``, ``BluetoothdAcceptor``, ``SocketAcceptor``) share: the
/// actions that undo what a running accept loop set up outside the process, the bounded accept loop, msgpipe's
/// own GATT server on a bearer, and the LE credit-based channel listener a peripheral opens beside GATT.
final class AcceptLoop: Sendable {
    let address: PipeAddress
    let options: MessagePipe.Options
    /// Actions that undo what a running accept loop set up outside the process (socket file, advertising).
    private let stopping = Mutex<(stopped: Bool, actions: [@Sendable () -> Void])>((false, []))

    /// `backend`: what the options name as their backend (nil: as given), so a stack's acceptor reports the
    /// stack it runs on and carries only what that stack honours (`.bluez` drops kernel options).
    init(address: PipeAddress, options: MessagePipe.Options, backend: PipeBackend? = nil) {
        var options = options
        if let backend { options.backend = backend }
        self.address = address
        self.options = options
    }

    /// Runs every action registered with ``onStop(_:)`` (last first) at once, from any thread; an action
    /// registered later runs as it is registered.
    func stop() {
        let actions = stopping.withLock { state -> [@Sendable () -> Void] in
            state.stopped = true
            defer { state.actions = [] }
            return state.actions
        }
        for action in actions.reversed() { action() }
    }

    /// Registers `action` for ``stop()``; runs it now when the acceptor was stopped already.
    func onStop(_ action: @escaping @Sendable () -> Void) {
        let stopped = stopping.withLock { state -> Bool in
            if !state.stopped { state.actions.append(action) }
            return state.stopped
        }
        if stopped { action() }
    }

    /// Takes items from `next` and runs `handle` for each (with its number, from 1) in a child task, up to
    /// `maximumConcurrent` at once (the next one is taken when one leaves), until `connections` were taken
    /// (nil: until `next` returns nil); returns once the last `handle` returned. What `next` throws ends the
    /// loop after the running handlers.
    static func acceptEach<Item: Sendable>(
        connections: Int?, maximumConcurrent: Int, next: () async throws -> Item?,
        handle: @escaping @Sendable (Item, Int) async -> Void
    ) async throws {
        let slots = CreditPool(capacity: max(1, maximumConcurrent))
        try await withThrowingDiscardingTaskGroup { group in
            var accepted = 0
            while connections.map({ accepted < $0 }) ?? true {
                try await slots.acquire()
                let item: Item?
                do {
                    item = try await next()
                } catch {
                    slots.release()
                    throw error
                }
                guard let item else {
                    slots.release()
                    return
                }
                accepted += 1
                let number = accepted
                group.addTask {
                    defer { slots.release() }
                    await handle(item, number)
                }
            }
        }
    }

    /// msgpipe's own GATT server on `bearer` (a UNIX socket or the kernel's ATT channel) until the central
    /// leaves, its link given to `handle` meanwhile; in link mode l2cap GATT only publishes the PSM and a central
    /// that subscribes is hung up on.
    func serveGATT(
        _ bearer: ATTBearer, peer: String, info: MsgPipeServiceInfo, configuration: GATTServer.Configuration,
        handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async {
        let (options, channelOnly) = (options, options.linkMode == .l2cap)
        let gattLink = GATTLink(profile: options.profile)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                guard channelOnly else { return await handle(gattLink, peer) }
                for await event in gattLink.events {
                    guard case .connected = event else { continue }
                    options.note(.warning, "\(peer) asked for data over GATT; serving the L2CAP channel only")
                    await gattLink.disconnect()
                }
            }
            await gattLink.serve(bearer, info: info, configuration: configuration)
            await gattLink.close()
        }
    }

    /// Runs `acceptGATT` (the backend's own accept loop, given `info` with the channel's PSM) beside the accept
    /// loop of an LE credit-based channel listener at a dynamic PSM (PROTOCOL.md 5.9), which hands each
    /// central's channel to `handle` as a `StreamLink`, up to `maximumConcurrent` at once. No listener in link
    /// mode gatt; in link mode auto a channel that cannot be opened (no mgmt access, a kernel without LE
    /// channels) is a warning and GATT serves alone; in link mode l2cap it throws
    /// `MessagePipeError.channelUnavailable(_:)`. Returns once `acceptGATT` returned and the channels' handlers
    /// too.
    func besideChannels(
        info: MsgPipeServiceInfo, maximumConcurrent: Int, handle: @escaping @Sendable (any PipeLink, String) async -> Void,
        acceptGATT: (MsgPipeServiceInfo) async throws -> Void
    ) async throws {
        var info = info
        let channels = try await openChannelListener()
        info.psm = channels?.psm
        let served = info
        let options = options
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let channels {
                options.note(.detail, "L2CAP channel on PSM 0x\(String(channels.psm, radix: 16)) beside GATT")
                group.addTask {
                    try await Self.acceptChannels(
                        channels, options: options, maximumConcurrent: maximumConcurrent, handle: handle)
                }
            }
            do {
                try await acceptGATT(served)
            } catch {
                channels?.stop()
                throw error
            }
            channels?.stop()
            try await group.waitForAll()
        }
    }

    /// The channel listener, with either Bluetooth backend (nil in link mode gatt or on a UNIX socket): a free
    /// dynamic PSM on the adapter, at the options' security level; stopped by ``stop()``.
    private func openChannelListener() async throws -> L2CAPChannel.SharedListener? {
        guard case .bluetooth = address, options.linkMode != .gatt else { return nil }
        let options = options
        let listener: L2CAPChannel.SharedListener
        do {
            listener = try await BlockingCall.run { () throws(BluetoothError) in
                let adapter = try BluetoothAdapter.resolve(try AdapterSelector(options.adapter), using: try ManagementSocket())
                return try L2CAPChannel.SharedListener(L2CAPChannel.Listener(adapter: adapter, security: options.security))
            }
        } catch {
            guard options.linkMode == .auto else { throw MessagePipeError.channelUnavailable("cannot listen: \(error)") }
            options.note(.warning, "no L2CAP channel (\(error)); serving GATT only")
            return nil
        }
        onStop { listener.stop() }
        return listener
    }

    /// Accepts centrals' channels, each a `StreamLink` given to `handle` in a child task, up to
    /// `maximumConcurrent` at once (a channel rides on a central's connection, which GATT's accounting counts
    /// too); returns once `listener` was stopped and the last `handle` returned.
    private static func acceptChannels(
        _ listener: L2CAPChannel.SharedListener, options: MessagePipe.Options, maximumConcurrent: Int,
        handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        try await acceptEach(connections: nil, maximumConcurrent: maximumConcurrent) {
            try await BlockingCall.run { () throws(BluetoothError) in try listener.accept() }
        } handle: { socket, _ in
            let unit = L2CAPChannel.sendUnit(socket.fileDescriptor) ?? ATTOpcode.defaultMTU
            let peer = "\(socket.peer)"
            do {
                let link = try StreamLink(adopting: socket.fileDescriptor, sendUnit: unit, framed: options.format == .msgpipe)
                options.note(.detail, "\(peer): data over the L2CAP channel, SDU \(unit)")
                await handle(link, peer)
                await link.close()
            } catch {
                options.note(.warning, "channel from \(peer): \(error)")
            }
        }
    }
}
