import CBluetooth
import Glibc

extension LinkPHY {
    /// From BT_PHY's bit mask; nil when it names no LE PHY for a direction (a BR/EDR link, or a kernel that
    /// has not learnt it).
    public init?(bits: UInt32) {
        func kind(_ oneM: Int32, _ twoM: Int32, _ coded: Int32) -> Kind? {
            // The fastest one the kernel reports.
            if bits & UInt32(twoM) != 0 { return .le2M }
            if bits & UInt32(oneM) != 0 { return .le1M }
            if bits & UInt32(coded) != 0 { return .coded }
            return nil
        }
        guard let transmit = kind(BT_PHY_LE_1M_TX, BT_PHY_LE_2M_TX, BT_PHY_LE_CODED_TX),
              let receive = kind(BT_PHY_LE_1M_RX, BT_PHY_LE_2M_RX, BT_PHY_LE_CODED_RX) else { return nil }
        self.init(transmit: transmit, receive: receive)
    }

    /// The PHYs of the connection `fd` (a connected L2CAP socket); nil when the kernel does not say.
    public init?(socket fd: Int32) {
        var bits: UInt32 = 0
        var length = socklen_t(MemoryLayout<UInt32>.size)
        guard getsockopt(fd, SOL_BLUETOOTH, BT_PHY, &bits, &length) == 0 else { return nil }
        self.init(bits: bits)
    }
}
