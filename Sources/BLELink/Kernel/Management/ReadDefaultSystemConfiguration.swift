public import GATT

/// Read Default System Configuration (command 0x004B, no parameters): the adapter's defaults as TLVs
/// (mgmt_config.c, read_def_system_config). One of the few commands an unprivileged process may send (the
/// kernel's mgmt_untrusted_commands), so anyone can learn the LE connection defaults.
public struct ReadDefaultSystemConfiguration: Equatable, Sendable {
    public static let opcode: UInt16 = 0x004B

    public static func command(_ controllerIndex: UInt16) -> ManagementCommand {
        ManagementCommand(opcode: opcode, controllerIndex: controllerIndex, name: "Read Default System Configuration")
    }

    /// The reply: every TLV the kernel returned, in its order.
    public struct Reply: Equatable, Sendable {
        public var parameters: [SystemConfigurationParameter]

        public init(parameters: [SystemConfigurationParameter]) { self.parameters = parameters }

        /// Decodes the TLVs; a length running past the end throws.
        public init(decoding bytes: ArraySlice<UInt8>) throws(BluetoothError) {
            var reader = ManagementReader(bytes, context: "Read Default System Configuration")
            parameters = try reader.systemConfigurationParameters()
        }

        /// The 16-bit value of `type` (the last one when repeated), or nil.
        public func value(_ type: UInt16) -> UInt16? { parameters.last { $0.type == type }?.uint16 }

        /// The LE connection defaults; nil when one of the four is missing, and a typed error when the
        /// kernel's values break a rule (they are not range-checked when set).
        public func connectionParameters() throws(ConnectionParametersError) -> ConnectionParameters? {
            guard let minimum = value(SystemConfigurationParameter.leMinimumConnectionInterval),
                  let maximum = value(SystemConfigurationParameter.leMaximumConnectionInterval),
                  let latency = value(SystemConfigurationParameter.leConnectionLatency),
                  let timeout = value(SystemConfigurationParameter.leSupervisionTimeout) else { return nil }
            return try ConnectionParameters(
                minimumInterval: minimum, maximumInterval: maximum, latency: latency, supervisionTimeout: timeout)
        }
    }
}
