package import BluetoothCore

extension MessagePipe {
    /// Where and how a scan runs, told once before it starts.
    public struct ScanStart: Sendable {
        /// The adapter scanning, "hci0".
        public let adapter: String
        /// The backend chosen (for `auto`, the one it resolved to), as ``ResolvedBackend/summary`` says it.
        public let backend: String
        /// The scan goes through bluetoothd's discovery (shared with its other clients), not the mgmt socket.
        public let throughBluetoothd: Bool
    }

    /// Lists advertising LE peers for `duration`, on `adapter` (nil: the first powered LE adapter) through
    /// `backend` (bluetoothd's discovery for bluez, the mgmt socket for kernel, `auto` as `PipeBackend` says;
    /// a scan takes no kernel options, so only the name).
    /// `onMatch` hears each peer that `filter` keeps the first time it is seen; the result is every such peer,
    /// strongest first. Throws `BluetoothError` or `BlueZError` (no adapter, powered off, bluetoothd missing
    /// for bluez, no permission), with the remedy in its description. `busAddress`: where bluetoothd runs (nil:
    /// the system bus). In BLELink's terms; the public entry point is `scan(adapter:backend:for:matching:...)`.
    package static func scan(
        adapter: String? = nil, backend: PipeBackend.Name = .auto, for duration: Duration, filter: ScanFilter = ScanFilter(),
        busAddress: String? = nil, onStart: @escaping @Sendable (ScanStart) -> Void = { _ in },
        onMatch: @escaping @Sendable (DiscoveredPeer) -> Void = { _ in }
    ) async throws -> [DiscoveredPeer] {
        _ = try AdapterSelector(adapter)
        switch try await ResolvedBackend.resolve(backend, busAddress: busAddress) {
        case let .bluez(bus):
            defer { bus.close() }
            return try await BluetoothdStack(bus: bus).scan(
                adapter: adapter, for: duration, filter: filter, onStart: onStart, onMatch: onMatch)
        case .kernel:
            return try await KernelStack().scan(
                adapter: adapter, for: duration, filter: filter, onStart: onStart, onMatch: onMatch)
        }
    }
}
