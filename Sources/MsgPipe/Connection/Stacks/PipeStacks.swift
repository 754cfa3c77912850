/// The one factory that picks a backend.
public enum PipeStacks {
    /// The stack for `address`: ``SocketStack`` for `unix:PATH`; over Bluetooth
    /// `MessagePipe.Options.backend` resolved (auto: ``BluetoothdStack`` when bluetoothd owns org.bluez on
    /// the bus, ``KernelStack`` otherwise). Notes the choice as detail. Throws `BlueZError` when bluez was
    /// asked for and bluetoothd cannot be reached, and `MessagePipeError.connectionParametersThroughBluetoothd(_:)`
    /// when auto picked bluetoothd and its kernel options ask for connection parameters or a PHY.
    public static func resolve(_ address: PipeAddress, options: MessagePipe.Options) async throws -> any PipeStack {
        try await resolve(address, options: options, observation: nil)
    }

    static func resolve(
        _ address: PipeAddress, options: MessagePipe.Options, observation: LinkObservation?
    ) async throws -> any PipeStack {
        guard case .bluetooth = address else { return SocketStack() }
        let backend = try await resolveBackend(options)
        options.note(.detail, backend.summary)
        switch backend {
        case .kernel: return KernelStack(observation: observation)
        case let .bluez(bus): return BluetoothdStack(bus: bus)
        }
    }

    /// The peripheral's acceptor for `address`, as ``resolve(_:options:)`` picks the stack: ``SocketAcceptor``
    /// for `unix:PATH`; over Bluetooth ``BluetoothdAcceptor`` (on the bus bluetoothd was found on) or
    /// ``KernelAcceptor``. The acceptor notes its backend when it starts. Throws as ``resolve(_:options:)``.
    public static func acceptor(at address: PipeAddress, options: MessagePipe.Options) async throws -> any LinkAcceptor {
        switch address {
        case let .unix(path): return SocketAcceptor(path: path, options: options)
        case let .bluetooth(name):
            switch try await resolveBackend(options) {
            case .kernel: return KernelAcceptor(name: name, options: options)
            case let .bluez(bus): return BluetoothdAcceptor(name: name, options: options, bus: bus)
            }
        }
    }

    /// `options.backend` resolved, and the one judgment kernel options leave: auto that picked bluetoothd
    /// with connection parameters or a PHY throws `MessagePipeError.connectionParametersThroughBluetoothd(_:)`
    /// (bluetoothd is asked nothing; the bus is closed). A bond directory does not apply there: bluetoothd
    /// keeps bonds. Decided here once, so bluetoothd's stack and acceptor check nothing of the kernel's.
    private static func resolveBackend(_ options: MessagePipe.Options) async throws -> ResolvedBackend {
        let backend = try await ResolvedBackend.resolve(options.backend.name, busAddress: options.bluetoothdBus)
        if case let .bluez(bus) = backend, let request = options.backend.kernelOptions?.requestedConnectionParameters {
            bus.close()
            throw MessagePipeError.connectionParametersThroughBluetoothd(request)
        }
        return backend
    }
}
