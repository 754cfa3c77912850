public import GATT

/// Set PHY Configuration (command 0x0045, `Selected_PHYs (4)`): the PHYs the host allows. For LE the kernel
/// turns the LE bits into HCI LE Set Default PHY (its TX and RX masks; "no preference" for a direction with
/// no bit), which the controller applies to connections made afterwards and may use to start a PHY update;
/// a live connection keeps its PHY. The selection must contain every supported PHY that is not
/// configurable (LE 1M always is) and nothing unsupported, or the kernel answers Invalid Parameters.
/// Needs CAP_NET_ADMIN.
public struct SetPHYConfiguration: Equatable, Sendable {
    public static let opcode: UInt16 = 0x0045
    public var selected: ManagementPHYs

    public init(selected: ManagementPHYs) { self.selected = selected }

    /// The selection that prefers `phy` for LE and keeps everything else of `current`: BR/EDR bits as they
    /// are, LE 1M (never optional) plus `phy`, and every supported PHY that cannot be switched off. Throws
    /// ``BluetoothError/notSupported(operation:remedy:)`` when the controller does not support `phy`.
    public init(preferring phy: LEPHY, current: GetPHYConfiguration.Reply) throws(BluetoothError) {
        let wanted = ManagementPHYs(phy)
        guard current.supported.isSuperset(of: wanted) else {
            throw .notSupported(
                operation: "PHY \(phy)",
                remedy: "the controller supports only \(current.supported.intersection(.le)); use a Bluetooth 5 "
                    + "controller with LE \(phy == .coded ? "Coded" : "2M") or leave the PHY to the controller")
        }
        let fixed = current.supported.subtracting(current.configurable)
        selected = current.selected.subtracting(.le)
            .union(ManagementPHYs(.le1M).intersection(current.supported)).union(wanted).union(fixed)
    }

    /// Decodes the 4 bytes exactly.
    public init(decoding bytes: ArraySlice<UInt8>) throws(BluetoothError) {
        var reader = ManagementReader(bytes, context: "Set PHY Configuration")
        selected = ManagementPHYs(rawValue: try reader.uint32())
        try reader.finish()
    }

    public func encode(into out: inout [UInt8]) { out.appendManagementField(selected.rawValue) }

    public func command(_ controllerIndex: UInt16) -> ManagementCommand {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return ManagementCommand(opcode: Self.opcode, controllerIndex: controllerIndex, parameters: bytes, name: "Set PHY Configuration")
    }
}
