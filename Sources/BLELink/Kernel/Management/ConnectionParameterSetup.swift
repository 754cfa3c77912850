public import GATT

/// Applies a ``ConnectionParameterRequest`` over the adapter's defaults through mgmt: as central, a peer's
/// Load Connection Parameters entry and the PHY preference; as peripheral, the adapter's defaults (for every
/// program on it; the old values are returned to restore). Nothing is skipped: a refusal throws a typed error.
///
/// ```swift
/// let chosen = try ConnectionParameterSetup.prepareConnection(to: peer, request: request, controller: 0, using: try ManagementSocket())
/// ```
public enum ConnectionParameterSetup {
    /// Central: loads `request` (resolved over the adapter's defaults) as `peer`'s entry and applies its PHY
    /// preference. Returns the parameters loaded (nil when only a PHY was asked for).
    @discardableResult
    public static func prepareConnection(
        to peer: BluetoothPeer, request: ConnectionParameterRequest, controller: UInt16,
        using management: some ManagementCommandExecuting
    ) throws(BluetoothError) -> ConnectionParameters? {
        var loaded: ConnectionParameters?
        if request.hasConnectionParameters {
            let parameters = try resolve(request, over: try defaults(controller: controller, using: management))
            try privileged { () throws(BluetoothError) in
                try management.loadConnectionParameters([.init(peer: peer, parameters: parameters)], controller: controller)
            }
            loaded = parameters
        }
        if let phy = request.phy {
            try privileged { () throws(BluetoothError) in _ = try management.preferPHY(phy, controller: controller) }
        }
        return loaded
    }

    /// Peripheral: makes `request` (resolved over the adapter's defaults) the adapter's LE connection
    /// defaults and applies its PHY preference. Returns the defaults that were in force before (to give to
    /// ``restoreDefaults(_:controller:using:)``), nil when no interval, latency or timeout was asked for.
    public static func setPeripheralDefaults(
        _ request: ConnectionParameterRequest, controller: UInt16, using management: some ManagementCommandExecuting
    ) throws(BluetoothError) -> (previous: ConnectionParameters, requested: ConnectionParameters)? {
        var result: (previous: ConnectionParameters, requested: ConnectionParameters)?
        if request.hasConnectionParameters {
            let previous = try defaults(controller: controller, using: management)
            let parameters = try resolve(request, over: previous)
            try privileged { () throws(BluetoothError) in
                try management.setDefaultConnectionParameters(parameters, controller: controller)
            }
            result = (previous, parameters)
        }
        if let phy = request.phy {
            try privileged { () throws(BluetoothError) in _ = try management.preferPHY(phy, controller: controller) }
        }
        return result
    }

    /// Puts the adapter's LE connection defaults back to `previous` (best effort: the caller reports a
    /// failure, there is nothing else to do).
    public static func restoreDefaults(
        _ previous: ConnectionParameters, controller: UInt16, using management: some ManagementCommandExecuting
    ) throws(BluetoothError) {
        try privileged { () throws(BluetoothError) in
            try management.setDefaultConnectionParameters(previous, controller: controller)
        }
    }

    /// Peripheral without an interval of its own: widens the adapter's default interval range to
    /// ``widestInterval(keeping:)`` of its defaults, so the kernel asks no central whose interval lies in
    /// that range to change it (it asks only when the interval is outside the default range). Latency and
    /// supervision timeout stay. Returns the defaults in force before (give them to
    /// ``restoreInterval(_:controller:using:)``) and the widened ones; nil when the range already covered
    /// the widened one and nothing was set. Without CAP_NET_ADMIN it throws
    /// ``BluetoothError/connectionParametersNeedCapability(operation:)``.
    public static func widenPeripheralInterval(
        controller: UInt16, using management: some ManagementCommandExecuting
    ) throws(BluetoothError) -> (previous: ConnectionParameters, widened: ConnectionParameters)? {
        let previous = try defaults(controller: controller, using: management)
        let widened = widestInterval(keeping: previous)
        guard previous.minimumInterval > widened.minimumInterval || previous.maximumInterval < widened.maximumInterval else {
            return nil
        }
        try privileged { () throws(BluetoothError) in
            try management.setDefaultConnectionInterval(
                minimum: widened.minimumInterval, maximum: widened.maximumInterval, controller: controller)
        }
        return (previous, widened)
    }

    /// `defaults` with the widest interval range their latency and supervision timeout allow: from 7.5 ms up
    /// to the longest interval for which the timeout is still longer than (1 + latency) x interval x 2, at
    /// most 4 s (7.5 to 208.75 ms with Linux's defaults, latency 0 and 420 ms). A connection other programs
    /// create on the adapter with its defaults therefore stays valid.
    public static func widestInterval(keeping defaults: ConnectionParameters) -> ConnectionParameters {
        let lowest = ConnectionParameters.intervalUnits.lowerBound
        // 4 x timeout > (1 + latency) x interval (``ConnectionParameters/shortestSupervisionTimeout``).
        let longest = (4 * Int(defaults.supervisionTimeout) - 1) / (1 + Int(defaults.latency))
        let maximum = max(min(longest, Int(ConnectionParameters.intervalUnits.upperBound)), Int(defaults.maximumInterval))
        return (try? ConnectionParameters(
            minimumInterval: lowest, maximumInterval: UInt16(maximum), latency: defaults.latency,
            supervisionTimeout: defaults.supervisionTimeout)) ?? defaults
    }

    /// Puts the adapter's default interval range back to `previous`'s, leaving latency and timeout (best
    /// effort: the caller reports a failure).
    public static func restoreInterval(
        _ previous: ConnectionParameters, controller: UInt16, using management: some ManagementCommandExecuting
    ) throws(BluetoothError) {
        try privileged { () throws(BluetoothError) in
            try management.setDefaultConnectionInterval(
                minimum: previous.minimumInterval, maximum: previous.maximumInterval, controller: controller)
        }
    }

    /// The adapter's LE connection defaults; Linux's built-in ones when the kernel does not list all four.
    static func defaults(
        controller: UInt16, using management: some ManagementCommandExecuting
    ) throws(BluetoothError) -> ConnectionParameters {
        let reply = try management.readDefaultSystemConfiguration(controller: controller)
        do {
            return try reply.connectionParameters() ?? .linuxDefault
        } catch {
            throw .invalidArgument("the adapter's default connection parameters break a rule: \(error)")
        }
    }

    static func resolve(
        _ request: ConnectionParameterRequest, over defaults: ConnectionParameters
    ) throws(BluetoothError) -> ConnectionParameters {
        do {
            return try request.resolved(over: defaults)
        } catch {
            throw .invalidArgument("\(request) over the adapter's defaults (\(defaults)): \(error)")
        }
    }

    /// Runs `body`, turning Permission Denied into the error that names CAP_NET_ADMIN and its remedies.
    static func privileged(_ body: () throws(BluetoothError) -> Void) throws(BluetoothError) {
        do throws(BluetoothError) {
            try body()
        } catch let .permissionDenied(operation) {
            throw .connectionParametersNeedCapability(operation: operation)
        }
    }
}
