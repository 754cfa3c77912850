import GATT
import Glibc

/// The options a connected Bluetooth socket reports at Linux's `SOL_BLUETOOTH` level, as
/// <bluetooth/bluetooth.h> defines them (kernel ABI): written out so the socket base links no libbluetooth.
enum BluetoothSocketOption {
    static let level: Int32 = 274
    /// `BT_SECURITY`: a `struct bt_security { uint8_t level; uint8_t key_size; }`.
    static let security: Int32 = 4
    /// `BT_PHY`: a 32-bit mask of the PHYs in use.
    static let phy: Int32 = 14

    /// The LE bits of `BT_PHY`'s mask.
    enum PHYBits {
        static let le1MTransmit: UInt32 = 0x0200, le1MReceive: UInt32 = 0x0400
        static let le2MTransmit: UInt32 = 0x0800, le2MReceive: UInt32 = 0x1000
        static let codedTransmit: UInt32 = 0x2000, codedReceive: UInt32 = 0x4000
    }

    /// The security of the link under a connected L2CAP socket (`getsockopt(BT_SECURITY)`: the link's level,
    /// which rises when it is encrypted); nil when the socket is not an L2CAP one or the level is unknown.
    static func linkSecurity(_ fd: Int32) -> ATTLinkSecurity? {
        var security: (level: UInt8, keySize: UInt8) = (0, 0)
        var length = socklen_t(MemoryLayout<(UInt8, UInt8)>.size)
        guard getsockopt(fd, level, Self.security, &security, &length) == 0 else { return nil }
        return ATTLinkSecurity(rawValue: Int(security.level))
    }
}
