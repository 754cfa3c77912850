/// Which controller to use: `hciN` (or just `N`), its address, or the first one that is ready for LE. BLELink
/// parses it from text (`AdapterSelector(_:)`), each backend finds the controller it means.
public enum AdapterSelector: Equatable, Sendable, CustomStringConvertible {
    case index(UInt16)
    case address(BluetoothAddress)
    case firstAvailable

    public var description: String {
        switch self {
        case let .index(index): "hci\(index)"
        case let .address(address): "\(address)"
        case .firstAvailable: ""
        }
    }
}
