
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
                try await PipeStacks.resolve(address, options: options, observation: observation)
            }
        }
    }
}
