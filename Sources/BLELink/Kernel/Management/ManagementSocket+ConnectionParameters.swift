public import GATT

/// The management commands that set what LE connections run on. Each throws
/// ``BluetoothError/permissionDenied(operation:)`` without CAP_NET_ADMIN (all but the read, which anyone may
/// send), ``BluetoothError/notSupported(operation:remedy:)`` when the kernel lacks the command or the
/// controller the feature, and the other ``BluetoothError`` cases of ``ManagementSocket/execute(_:timeout:)``.
///
/// ```swift
/// let management = try ManagementSocket()
/// try management.setDefaultConnectionParameters(parameters, controller: 0)   // every new LE connection
/// try management.preferPHY(.le2M, controller: 0)
/// ```
extension ManagementCommandExecuting {
    /// Sets per-peer parameters (``LoadConnectionParameters``): the kernel uses them when it connects to
    /// that peer, and (management revision 23 and later) updates a single connected peer's link at once.
    public func loadConnectionParameters(
        _ entries: [LoadConnectionParameters.Entry], controller: UInt16
    ) throws(BluetoothError) {
        try run(LoadConnectionParameters(entries).command(controller), kernel: "a newer kernel")
    }

    /// Sets the adapter's LE connection defaults (``SetDefaultSystemConfiguration``): the parameters of every
    /// connection this adapter creates to a peer without its own entry, and the range it asks a central for
    /// as peripheral.
    public func setDefaultConnectionParameters(_ parameters: ConnectionParameters, controller: UInt16) throws(BluetoothError) {
        try run(SetDefaultSystemConfiguration(connection: parameters).command(controller), kernel: "Linux 5.8 or later")
    }

    /// Sets only the adapter's default LE connection interval range (1.25 ms units), leaving its latency and
    /// supervision timeout: what the kernel asks a central for as peripheral, and the range of connections
    /// this adapter creates to a peer without its own entry. The kernel does not check the values.
    public func setDefaultConnectionInterval(minimum: UInt16, maximum: UInt16, controller: UInt16) throws(BluetoothError) {
        try run(
            SetDefaultSystemConfiguration(intervalMinimum: minimum, intervalMaximum: maximum).command(controller),
            kernel: "Linux 5.8 or later")
    }

    /// The adapter's default system configuration; anyone may read it.
    public func readDefaultSystemConfiguration(controller: UInt16) throws(BluetoothError) -> ReadDefaultSystemConfiguration.Reply {
        let reply = try run(ReadDefaultSystemConfiguration.command(controller), kernel: "Linux 5.8 or later")
        return try ReadDefaultSystemConfiguration.Reply(decoding: reply[...])
    }

    /// The controller's supported, configurable and selected PHYs.
    public func phyConfiguration(controller: UInt16) throws(BluetoothError) -> GetPHYConfiguration.Reply {
        let reply = try run(GetPHYConfiguration.command(controller), kernel: "Linux 4.19 or later")
        return try GetPHYConfiguration.Reply(decoding: reply[...])
    }

    /// Prefers `phy` for the adapter's LE connections made from now on (``SetPHYConfiguration``) and returns
    /// the selection now in force.
    @discardableResult
    public func preferPHY(_ phy: LEPHY, controller: UInt16) throws(BluetoothError) -> ManagementPHYs {
        let current = try phyConfiguration(controller: controller)
        let command = try SetPHYConfiguration(preferring: phy, current: current)
        if command.selected != current.selected {
            try run(command.command(controller), kernel: "Linux 4.19 or later")
        }
        return command.selected
    }

    /// Executes `command`, naming what is missing when the kernel does not know it (`kernel`: the kernel
    /// that does) or the controller refuses the feature.
    @discardableResult
    private func run(_ command: ManagementCommand, kernel: String) throws(BluetoothError) -> [UInt8] {
        do {
            return try execute(command, timeout: .seconds(5))
        } catch {
            throw ManagementSocket.connectionParameterError(error, command: command, kernel: kernel)
        }
    }
}

extension ManagementSocket {

    /// `error` with Unknown Command, Not Supported and Invalid Parameters made into
    /// ``BluetoothError/notSupported(operation:remedy:)``; every other error as it is.
    static func connectionParameterError(_ error: BluetoothError, command: ManagementCommand, kernel: String) -> BluetoothError {
        guard case let .commandFailed(_, status) = error else { return error }
        switch status.rawValue {
        case 0x01:
            return .notSupported(operation: command.description, remedy: "this kernel does not know the command; it needs \(kernel)")
        case ManagementStatus.notSupported.rawValue:
            return .notSupported(
                operation: command.description, remedy: "the controller or its LE settings cannot do it (check 'btmgmt info')")
        case 0x0D:
            return .notSupported(
                operation: command.description, remedy: "the kernel refused the values as Invalid Parameters for this controller")
        default:
            return error
        }
    }
}
