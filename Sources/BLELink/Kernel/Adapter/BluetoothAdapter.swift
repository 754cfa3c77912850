/// A local Bluetooth controller as the management interface reports it.
public struct BluetoothAdapter: Sendable, Equatable, CustomStringConvertible {
    /// The controller index (hciN's N).
    public var index: UInt16
    public var info: ControllerInfo

    public init(index: UInt16, info: ControllerInfo) {
        self.index = index
        self.info = info
    }

    /// "hciN".
    public var name: String { "hci\(index)" }
    /// The controller's public (identity) address.
    public var address: BluetoothAddress { info.address }

    public var description: String { "\(name) (\(address))" }

    /// Finds the controller `selector` names, reading each controller's information.
    /// `.firstAvailable` picks the first powered LE controller, else the first one.
    public static func resolve(
        _ selector: AdapterSelector, using management: ManagementSocket
    ) throws(BluetoothError) -> BluetoothAdapter {
        let indices = try decodeControllerIndexList(try management.execute(.readControllerIndexList)[...])
        var adapters: [BluetoothAdapter] = []
        for index in indices {
            if case let .index(wanted) = selector, wanted != index { continue }
            let info = try ControllerInfo(decoding: try management.execute(.readControllerInfo(index))[...])
            adapters.append(BluetoothAdapter(index: index, info: info))
        }
        let found: BluetoothAdapter? = switch selector {
        case .index: adapters.first
        case let .address(address): adapters.first { $0.address == address }
        case .firstAvailable: adapters.first { $0.info.isReadyForLowEnergy } ?? adapters.first
        }
        guard let found else { throw .noAdapter(selector: selector.description) }
        return found
    }

    /// Throws ``BluetoothError/adapterDown(adapter:)`` or ``BluetoothError/lowEnergyDisabled(adapter:)``
    /// unless the controller is powered with LE on.
    public func requireReadyForLowEnergy() throws(BluetoothError) {
        guard info.currentSettings.contains(.powered) else { throw .adapterDown(adapter: name) }
        guard info.currentSettings.contains(.lowEnergy) else { throw .lowEnergyDisabled(adapter: name) }
    }
}
