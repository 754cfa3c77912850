/// The one factory that picks a backend.
public enum PipeStacks {
    /// The stack for `address`: ``SocketStack`` for `unix:PATH`; over Bluetooth
    /// `MessagePipe.Options.backend` resolved (auto: ``BluetoothdStack`` when bluetoothd owns org.bluez on
    /// the bus, ``KernelStack`` otherwise). Notes the choice as detail. Throws `BlueZError` when bluez was
    /// asked for and bluetoothd cannot be reached.
    public static func resolve(_ address: PipeAddress, options: MessagePipe.Options) async throws -> any PipeStack {
        try await resolve(address, options: options, observation: nil)
    }

    static func resolve(
        _ address: PipeAddress, options: MessagePipe.Options, observation: LinkObservation?
    ) async throws -> any PipeStack {
        guard case .bluetooth = address else { return SocketStack() }
        let backend = try await ResolvedBackend.resolve(options.backend, busAddress: options.bluetoothdBus)
        options.note(.detail, backend.summary)
        switch backend {
        case .kernel: return KernelStack(observation: observation)
        case let .bluez(bus): return BluetoothdStack(bus: bus)
        }
    }

    /// The peripheral's acceptor for `address`, as ``resolve(_:options:)`` picks the stack: ``SocketAcceptor``
    /// for `unix:PATH`; over Bluetooth ``BluetoothdAcceptor`` (on the bus bluetoothd was found on) or
    /// ``KernelAcceptor``. The acceptor notes its backend when it starts. Throws `BlueZError` when bluez was
    /// asked for and bluetoothd cannot be reached.
    public static func acceptor(at address: PipeAddress, options: MessagePipe.Options) async throws -> any LinkAcceptor {
        switch address {
        case let .unix(path): return SocketAcceptor(path: path, options: options)
        case let .bluetooth(name):
            switch try await ResolvedBackend.resolve(options.backend, busAddress: options.bluetoothdBus) {
            case .kernel: return KernelAcceptor(name: name, options: options)
            case let .bluez(bus): return BluetoothdAcceptor(name: name, options: options, bus: bus)
            }
        }
    }
}
