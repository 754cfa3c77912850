
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
}
