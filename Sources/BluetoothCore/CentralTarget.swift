/// Whom a central connects to: an address (optionally "/random" for a random address type) or the local
/// name a peripheral advertises.
public enum CentralTarget: Sendable, Equatable, CustomStringConvertible {
    case peer(BluetoothPeer)
    case name(String)

    /// "00:AA:01:00:00:00", "C0:11:22:33:44:55/random", or anything else as an advertised name.
    public init(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        if let first = parts.first, let address = BluetoothAddress(first) {
            let type: BluetoothAddressType = parts.count == 2 && parts[1] == "random" ? .leRandom : .lePublic
            self = .peer(BluetoothPeer(address: address, type: type))
        } else {
            self = .name(text)
        }
    }

    public var description: String {
        switch self {
        case let .peer(peer): peer.description
        case let .name(name): "name '\(name)'"
        }
    }
}
