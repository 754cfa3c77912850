public import BLELink

extension PipeConnector {
    /// A connector to `address` over `stack` (nil: the stack ``PipeStacks/resolve(_:options:)`` picks for the
    /// address and `MessagePipe.Options.backend` when the link is made).
    ///
    /// ```swift
    /// let connector = PipeConnector(to: PipeAddress("kiosk"), options: options)
    /// let link = try await connector.makeLink()
    /// ```
    public init(to address: PipeAddress, over stack: (any PipeStack)? = nil, options: MessagePipe.Options) {
        if let stack {
            self.init(to: address, over: stack, options: options)
        } else {
            self.init(to: address, options: options) { address, options, observation in
                try await PipeStacks.resolve(address, options: options, onBearer: { _ in }, observation: observation)
            }
        }
    }

    /// A new central link, as `makeLink()` makes it; `onBearer` sees each connection's ATT bearer before GATT
    /// starts on it, where the stack ``PipeStacks/resolve(_:options:)`` picks has one (the kernel's and a UNIX
    /// socket's: a benchmark reads the PHY from it). A stack given at `init` is used as it is.
    public func makeLink(onBearer: @escaping @Sendable (ATTBearer) -> Void) async throws -> any CentralLink {
        if let stack { return try await stack.centralLink(to: address, options: options) }
        return try await PipeStacks.resolve(address, options: options, onBearer: onBearer, observation: observation)
            .centralLink(to: address, options: options)
    }
}
