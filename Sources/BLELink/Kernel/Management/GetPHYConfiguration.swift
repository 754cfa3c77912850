/// Get PHY Configuration (command 0x0044, no parameters): what the controller supports, which of those the
/// host may switch, and which are selected (`Supported (4) | Configurable (4) | Selected (4)`).
public struct GetPHYConfiguration: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0044

    public static func command(_ controllerIndex: UInt16) -> ManagementCommand {
        ManagementCommand(opcode: opcode, controllerIndex: controllerIndex, name: "Get PHY Configuration")
    }

    /// The reply.
    public struct Reply: Equatable, Sendable {
        public var supported: ManagementPHYs
        public var configurable: ManagementPHYs
        public var selected: ManagementPHYs

        public init(supported: ManagementPHYs, configurable: ManagementPHYs, selected: ManagementPHYs) {
            self.supported = supported
            self.configurable = configurable
            self.selected = selected
        }

        /// Decodes the 12 bytes exactly.
        public init(decoding bytes: ArraySlice<UInt8>) throws(BluetoothError) {
            var reader = ManagementReader(bytes, context: "Get PHY Configuration")
            supported = ManagementPHYs(rawValue: try reader.uint32())
            configurable = ManagementPHYs(rawValue: try reader.uint32())
            selected = ManagementPHYs(rawValue: try reader.uint32())
            try reader.finish()
        }

        public func encode(into out: inout [UInt8]) {
            out.appendManagementField(supported.rawValue)
            out.appendManagementField(configurable.rawValue)
            out.appendManagementField(selected.rawValue)
        }
    }
}
