public import GATT

/// Set Default System Configuration (command 0x004C): TLVs that replace the adapter's defaults
/// (mgmt_config.c, set_def_system_config). The LE connection ones (0x0017-0x001A) are what the kernel uses
/// for every LE connection without a per-peer entry (``LoadConnectionParameters``): as central in its LE
/// Create Connection, as peripheral as the range an incoming connection's interval is checked against
/// (l2cap_le_conn_ready asks the central for it with an L2CAP Connection Parameter Update Request when the
/// interval is outside). The kernel checks only the lengths: a type it does not know is skipped, values are
/// not range-checked, so a caller validates first. Needs CAP_NET_ADMIN; kernels before the command (Linux
/// 5.8) answer Unknown Command.
public struct SetDefaultSystemConfiguration: Equatable, Sendable {
    public static let opcode: UInt16 = 0x004C
    public var parameters: [SystemConfigurationParameter]

    public init(_ parameters: [SystemConfigurationParameter]) { self.parameters = parameters }

    /// The four LE connection TLVs for `connection`, in type order.
    public init(connection: ConnectionParameters) {
        self.init([
            SystemConfigurationParameter(type: SystemConfigurationParameter.leMinimumConnectionInterval, connection.minimumInterval),
            SystemConfigurationParameter(type: SystemConfigurationParameter.leMaximumConnectionInterval, connection.maximumInterval),
            SystemConfigurationParameter(type: SystemConfigurationParameter.leConnectionLatency, connection.latency),
            SystemConfigurationParameter(type: SystemConfigurationParameter.leSupervisionTimeout, connection.supervisionTimeout),
        ])
    }

    /// The two LE connection interval TLVs only (0x0017, 0x0018), in 1.25 ms units, minimum first: the
    /// adapter's latency and supervision timeout stay as they are.
    public init(intervalMinimum: UInt16, intervalMaximum: UInt16) {
        self.init([
            SystemConfigurationParameter(type: SystemConfigurationParameter.leMinimumConnectionInterval, intervalMinimum),
            SystemConfigurationParameter(type: SystemConfigurationParameter.leMaximumConnectionInterval, intervalMaximum),
        ])
    }

    /// Decodes the TLVs; a length running past the end throws.
    public init(decoding bytes: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(bytes, context: "Set Default System Configuration")
        parameters = try reader.systemConfigurationParameters()
    }

    public func encode(into out: inout [UInt8]) {
        for parameter in parameters { parameter.encode(into: &out) }
    }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return ManagementCommand(
            opcode: Self.opcode, controllerIndex: controllerIndex, parameters: bytes, name: "Set Default System Configuration")
    }
}
