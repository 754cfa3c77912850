public import GATT

/// The LE PHYs a connection transmits and receives on, as its backend learns them (on Linux the kernel's
/// `getsockopt(BT_PHY)` for an L2CAP socket, in BLESocket): 1M at connection, 2M or Coded after a PHY update.
public struct LinkPHY: Sendable, Equatable, CustomStringConvertible {
    /// One LE PHY.
    public typealias Kind = LEPHY

    public let transmit: Kind
    public let receive: Kind

    public init(transmit: Kind, receive: Kind) {
        self.transmit = transmit
        self.receive = receive
    }

    /// "2m", or "tx 2m / rx 1m" when the directions differ.
    public var description: String {
        transmit == receive ? transmit.rawValue : "tx \(transmit.rawValue) / rx \(receive.rawValue)"
    }
}
