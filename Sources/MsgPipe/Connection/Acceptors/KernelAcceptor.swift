import BLELink
public import GATT
import Transport

/// The kernel backend's peripheral (``KernelStack``'s acceptor): advertises the profile's service through the
/// mgmt socket and serves each central with msgpipe's own GATT server on the kernel's ATT channel, beside an LE
/// credit-based channel unless the link mode is gatt. Applies the backend's `KernelOptions.connectionParameters`
/// to the adapter while serving; without them widens the adapter's default interval range so centrals keep theirs.
///
/// ```swift
/// let acceptor = KernelAcceptor(name: "kiosk", options: options)
/// try await acceptor.acceptLinks(
///     info: options.serviceInfo(), connections: nil, maximumConcurrent: 4, centralsAtOnce: 4, unnumbered: false,
///     onReady: { print($0) }) { link, peer in await TransportListener().accept(link, peer: peer) }
/// ```
public final class KernelAcceptor: LinkAcceptor {
    private let loop: AcceptLoop
    /// The local name advertised.
    public let name: String
    /// What only the kernel honours, from the options' backend.
    private let kernel: KernelOptions

    /// Advertises `name` with `options` (their backend set to kernel, keeping the kernel options of
    /// `PipeBackend.kernel(_:)` or `PipeBackend.auto(kernel:)`).
    public init(name: String, options: MessagePipe.Options) {
        let kernel = options.backend.kernelOptions ?? KernelOptions()
        (self.name, self.kernel) = (name, kernel)
        self.loop = AcceptLoop(address: .bluetooth(name), options: options, backend: .kernel(kernel))
    }

    /// `LinkAcceptor/acceptLinks(info:connections:maximumConcurrent:centralsAtOnce:unnumbered:onReady:handle:)`:
    /// the kernel serves several centrals at once (`centralsAtOnce` is not limited) and keeps values in order
    /// (`unnumbered` needs no advice). Throws `BluetoothError` when the adapter cannot advertise or its
    /// connection defaults cannot be set.
    public func acceptLinks(
        info: MsgPipeServiceInfo, connections: Int?, maximumConcurrent: Int, centralsAtOnce: Int, unnumbered: Bool,
        onReady: (String) -> Void, handle: @escaping @Sendable (any PipeLink, String) async -> Void
    ) async throws {
        options.note(.detail, ResolvedBackend.kernel.summary)
        var restoreDefaults: (@Sendable () -> Void)?
        let request = kernel.requestedConnectionParameters
        if let request { restoreDefaults = try await setPeripheralParameters(request) }
        if request?.hasConnectionParameters != true { restoreDefaults = await widenPeripheralInterval() }
        defer { restoreDefaults?() }
        // The kernel lets a central write before its link is encrypted: msgpipe's GATT server refuses it
        // (Insufficient Authentication) until the link has the security asked for.
        var configuration = GATTServer.Configuration()
        configuration.requiredSecurity = options.security.requiredLinkSecurity
        let loop = loop
        try await loop.besideChannels(info: info, maximumConcurrent: maximumConcurrent, handle: handle) { served in
            try await acceptConnections(
                maximumConcurrent: max(1, maximumConcurrent), connections: connections, onReady: onReady
            ) { [configuration] socket in
                let peer = "\(socket.peer)"
                do {
                    let bearer = try ATTBearer(adopting: socket.fileDescriptor)
                    await loop.serveGATT(bearer, peer: peer, info: served, configuration: configuration, handle: handle)
                } catch {
                    loop.options.note(.warning, "connection from \(peer): \(error)")
                }
            }
        }
    }

    /// Makes `request` the adapter's LE connection defaults, so the kernel asks each central for that range (an
    /// L2CAP Connection Parameter Update Request when the central's interval lies outside it). Returns what puts
    /// the previous defaults back, once, also run by ``stop()``: the defaults are the adapter's, seen by every
    /// program on it.
    private func setPeripheralParameters(_ request: ConnectionParameterRequest) async throws -> (@Sendable () -> Void)? {
        let options = options
        let (controller, set) = try await BlockingCall.run { () throws(BluetoothError) in
            let management = try ManagementSocket()
            let adapter = try BluetoothAdapter.resolve(try AdapterSelector(options.adapter), using: management)
            return (adapter.index, try ConnectionParameterSetup.setPeripheralDefaults(
                request, controller: adapter.index, using: management))
        }
        if let phy = request.phy { options.note(.detail, "hci\(controller): preferring PHY \(phy)") }
        guard let set else { return nil }
        options.note(.detail, "hci\(controller): asking centrals for \(set.requested) (adapter default until stopped; was \(set.previous))")
        return restoring(set.previous, controller: controller) { previous, management throws(BluetoothError) in
            try ConnectionParameterSetup.restoreDefaults(previous, controller: controller, using: management)
        }
    }

    /// Without an interval of its own the peripheral leaves each central's interval as it is: the adapter's
    /// default interval range is widened while serving
    /// (``ConnectionParameterSetup/widenPeripheralInterval(controller:using:)``), so the kernel sends no
    /// L2CAP Connection Parameter Update Request for an interval inside it; returns what puts the previous
    /// range back, once, also run by ``stop()``. Where that cannot be done (without CAP_NET_ADMIN, a kernel
    /// before 5.8) one advice note says so and serving goes on: the kernel then asks each central outside the
    /// adapter's range for that range, as before.
    private func widenPeripheralInterval() async -> (@Sendable () -> Void)? {
        let options = options
        let widened: (controller: UInt16, set: (previous: ConnectionParameters, widened: ConnectionParameters)?)
        do {
            widened = try await BlockingCall.run { () throws(BluetoothError) in
                let management = try ManagementSocket()
                let adapter = try BluetoothAdapter.resolve(try AdapterSelector(options.adapter), using: management)
                return (adapter.index, try ConnectionParameterSetup.widenPeripheralInterval(
                    controller: adapter.index, using: management))
            }
        } catch {
            options.note(.advice, "the adapter's default connection interval range stays as it is (\(error)): its kernel "
                + "asks each central whose interval lies outside that range to move into it")
            return nil
        }
        let controller = widened.controller
        guard let set = widened.set else { return nil }
        options.note(.detail, "hci\(controller): default connection interval range \(set.widened) until stopped (was "
            + "\(set.previous)), so centrals keep their interval")
        return restoring(set.previous, controller: controller) { previous, management throws(BluetoothError) in
            try ConnectionParameterSetup.restoreInterval(previous, controller: controller, using: management)
        }
    }

    /// What runs `restore` with `previous` once (also at ``stop()``), a failure noted as a warning.
    private func restoring(
        _ previous: ConnectionParameters, controller: UInt16,
        _ restore: @escaping @Sendable (ConnectionParameters, ManagementSocket) throws(BluetoothError) -> Void
    ) -> @Sendable () -> Void {
        let options = options
        let done = OnceFlag()
        let action: @Sendable () -> Void = {
            guard done.claim() else { return }
            do throws(BluetoothError) {
                try restore(previous, try ManagementSocket())
            } catch {
                options.note(.warning, "could not put hci\(controller)'s connection defaults back to \(previous): \(error)")
            }
        }
        loop.onStop(action)
        return action
    }

    /// Advertises the name with the profile's service while fewer than `maximumConcurrent` centrals are
    /// linked (stops at the maximum, resumes when one leaves) and runs `serve` for each central in a child
    /// task, with the connected ATT socket (which `serve` owns and must close).
    private func acceptConnections(
        maximumConcurrent: Int, connections: Int?, onReady: (String) -> Void,
        serve: @escaping @Sendable (ConnectedATTSocket) async -> Void
    ) async throws {
        let (options, localName, bondDirectory) = (options, name, kernel.bondDirectory)
        let peripheral = try await BlockingCall.run { () throws(BluetoothError) in
            try BLEPeripheral(
                adapter: try AdapterSelector(options.adapter),
                advertisement: Advertisement(
                    localName: localName, service: AdvertisedServiceUUID(options.profile.service.description)),
                security: options.security,
                pairing: BLEPeripheral.Pairing(bondDirectory: bondDirectory) { note in
                    options.note(note.kind == .warning ? .warning : .detail, note.description)
                })
        }
        // The peripheral's own lock is held while it waits for a central: stopAdvertising needs none, and a
        // wait that finds room as the loop stops advertises no more.
        loop.onStop { peripheral.stopAdvertising() }
        onReady("advertising '\(peripheral.advertisement.localName)' on \(peripheral.adapter)")
        defer { peripheral.stop() }
        try await withThrowingDiscardingTaskGroup { group in
            var accepted = 0
            // Never more linked at once than there are connections left to accept: at the maximum the
            // advertising instance is removed, so no central can land where nobody will accept it.
            let maximum = min(maximumConcurrent, connections ?? .max)
            for try await socket in peripheral.connections(maximumConcurrent: maximum) {
                accepted += 1
                group.addTask { await serve(socket) }
                if let connections, accepted >= connections {
                    peripheral.stop()  // the last one: no advertising while they are served
                    break
                }
            }
        }
    }

    public var options: MessagePipe.Options { loop.options }
    /// False: a kernel accept blocks on a thread of its own.
    public var endsOnCancellation: Bool { false }
    /// Stops advertising and the channel listener at once, from any thread, and puts the adapter's
    /// connection defaults back. The accept loop itself ends when its task is cancelled.
    public func stop() { loop.stop() }
}
