public import BluetoothCore
import Glibc

extension LinkPHY {
    /// From BT_PHY's bit mask; nil when it names no LE PHY for a direction (a BR/EDR link, or a kernel that
    /// has not learnt it).
    public init?(bits: UInt32) {
        func kind(_ oneM: UInt32, _ twoM: UInt32, _ coded: UInt32) -> Kind? {
            // The fastest one the kernel reports.
            if bits & twoM != 0 { return .le2M }
            if bits & oneM != 0 { return .le1M }
            if bits & coded != 0 { return .coded }
            return nil
        }
        guard let transmit = kind(BluetoothSocketOption.PHYBits.le1MTransmit, BluetoothSocketOption.PHYBits.le2MTransmit, BluetoothSocketOption.PHYBits.codedTransmit),
              let receive = kind(BluetoothSocketOption.PHYBits.le1MReceive, BluetoothSocketOption.PHYBits.le2MReceive, BluetoothSocketOption.PHYBits.codedReceive)
        else { return nil }
        self.init(transmit: transmit, receive: receive)
    }

    /// The PHYs of the connection `fd` (a connected L2CAP socket); nil when the kernel does not say.
    public init?(socket fd: Int32) {
        var bits: UInt32 = 0
        var length = socklen_t(MemoryLayout<UInt32>.size)
        guard getsockopt(fd, BluetoothSocketOption.level, BluetoothSocketOption.phy, &bits, &length) == 0 else { return nil }
        self.init(bits: bits)
    }
}
