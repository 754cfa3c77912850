public import BLELink
import BlueZLink

/// A stack that lists advertising peers: the kernel's (the mgmt socket) and bluetoothd's (its discovery). A
/// UNIX socket has nothing to scan, so ``SocketStack`` does not conform.
///
/// ```swift
/// let peers = try await KernelStack().scan(adapter: nil, for: .seconds(5), filter: ScanFilter(name: "till-7"))
/// ```
public protocol ScanningStack: PipeStack {
    /// Lists advertising LE peers for `duration` on `adapter` (nil: the first powered LE adapter). `onStart`
    /// is told the adapter and the backend before the scan starts; `onMatch` hears each peer that `filter`
    /// keeps the first time it is seen. Returns every such peer, strongest first. Throws the backend's error
    /// (no adapter, powered off, no permission), with the remedy in its description.
    func scan(
        adapter: String?, for duration: Duration, filter: ScanFilter,
        onStart: @escaping @Sendable (MessagePipe.ScanStart) -> Void, onMatch: @escaping @Sendable (DiscoveredPeer) -> Void
    ) async throws -> [DiscoveredPeer]
}

extension KernelStack: ScanningStack {
    /// Scans through the mgmt socket.
    public func scan(
        adapter: String?, for duration: Duration, filter: ScanFilter,
        onStart: @escaping @Sendable (MessagePipe.ScanStart) -> Void, onMatch: @escaping @Sendable (DiscoveredPeer) -> Void
    ) async throws -> [DiscoveredPeer] {
        let selector = try AdapterSelector(adapter)
        return try await BlockingCall.run { () throws(BluetoothError) in
            let management = try ManagementSocket()
            let adapter = try BluetoothAdapter.resolve(selector, using: management)
            onStart(MessagePipe.ScanStart(adapter: adapter.description, backend: ResolvedBackend.kernel.summary, throughBluetoothd: false))
            return try Scanner.scan(adapter: adapter, using: management, duration: duration, filter: filter, onMatch: onMatch)
        }
    }
}

extension BluetoothdStack: ScanningStack {
    /// Scans through bluetoothd's discovery (shared with its other clients), on the stack's bus.
    public func scan(
        adapter: String?, for duration: Duration, filter: ScanFilter,
        onStart: @escaping @Sendable (MessagePipe.ScanStart) -> Void, onMatch: @escaping @Sendable (DiscoveredPeer) -> Void
    ) async throws -> [DiscoveredPeer] {
        let path = try await BlueZAdapter.path(for: try AdapterSelector(adapter), bus: bus)
        onStart(MessagePipe.ScanStart(
            adapter: BlueZAdapter.name(path: path), backend: ResolvedBackend.bluez(bus).summary, throughBluetoothd: true))
        return try await BlueZDiscovery.scan(bus: bus, adapter: path, duration: duration, filter: filter, onMatch: onMatch)
    }
}
