import BLELink
import BlueZLink
import GATT
public import SDBus

/// The bluetoothd backend: beside bluetoothd, through its D-Bus API (no root; the adapter stays
/// bluetoothd's). A central's link is a ``BlueZCentralLink``, which takes the LE credit-based channel the
/// peripheral publishes where `MessagePipe.Options.linkMode` allows it.
///
/// ```swift
/// let stack = try await PipeStacks.resolve(PipeAddress("kiosk"), options: options)  // bluetoothd when it runs
/// let pipe = try await MessagePipe.connect(to: "kiosk", over: stack, options: options)
/// ```
public struct BluetoothdStack: PipeStack {
    /// The system-bus connection bluetoothd was found on. The central link made from it owns it (and closes
    /// it when it closes): make one stack per central link, as ``PipeStacks/resolve(_:options:)`` does. A
    /// scan uses it and leaves it open.
    public let bus: DBusConnection

    public init(bus: DBusConnection) {
        self.bus = bus
    }

    /// A ``BlueZCentralLink`` to `address`. With a plain format every packet is a Write Request (bluetoothd
    /// would queue Write Commands without bound and hide a loss). Throws `BlueZError` when the adapter is
    /// missing. `options.backend` is not read: kernel options are ``KernelStack``'s (``PipeStacks`` refuses
    /// auto's when it picks bluetoothd). A `unix:` address is ``SocketStack``'s.
    public func centralLink(to address: PipeAddress, options: MessagePipe.Options) async throws -> any CentralLink {
        guard case let .bluetooth(text) = address else {
            bus.close()
            return try await SocketStack().centralLink(to: address, options: options)
        }
        let central: BlueZCentralLink
        do {
            let adapter = try await BlueZAdapter.path(for: try AdapterSelector(options.adapter), bus: bus)
            let confirmedWrites = options.format != .msgpipe
            // Confirmed writes go one at a time: EATT neither slows nor reorders them.
            if !confirmedWrites, let note = BluetoothdConfiguration.eattNote(
                version: await BlueZVersion.running(bus: bus), unnumbered: options.format != .msgpipe,
                eattOff: BluetoothdConfiguration.turnsEATTOff()) {
                options.note(.advice, note)
            }
            central = BlueZCentralLink(
                bus: bus, adapter: adapter, confirmedWrites: confirmedWrites, mode: options.linkMode,
                framed: options.format == .msgpipe, security: options.security)
        } catch {
            bus.close()
            throw error
        }
        let target = CentralTarget(text)
        return ConnectingLink(base: central) { _ in
            let (peer, summary) = try await central.connect(target, profile: options.profile, timeout: options.connectTimeout)
            options.note(.detail, "\(peer): data over \(summary)")
            return peer
        }
    }

    /// A ``BluetoothdAcceptor`` that registers the application and advertises `address`'s name through
    /// bluetoothd; its accept loop opens a bus connection of its own. A `unix:` address is ``SocketStack``'s.
    public func acceptor(at address: PipeAddress, options: MessagePipe.Options) -> any LinkAcceptor {
        guard case let .bluetooth(name) = address else { return SocketStack().acceptor(at: address, options: options) }
        return BluetoothdAcceptor(name: name, options: options)
    }
}
