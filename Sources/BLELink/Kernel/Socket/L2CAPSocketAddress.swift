public import CBluetooth
import GATT
import Glibc

/// Builds `sockaddr_l2` values for the LE ATT fixed channel.
public enum L2CAPSocketAddress {
    /// The ATT fixed channel identifier on LE links.
    public static let attChannel: UInt16 = 4

    /// A `sockaddr_l2` for `address` on fixed channel `cid` (little-endian on the wire, as `htobs` does).
    public static func make(
        address: BluetoothAddress, type: BluetoothAddressType, cid: UInt16 = attChannel
    ) -> sockaddr_l2 {
        var result = sockaddr_l2()
        result.l2_family = sa_family_t(AF_BLUETOOTH)
        result.l2_psm = 0
        result.l2_cid = cid.littleEndian
        result.l2_bdaddr_type = type.rawValue
        let b = address.littleEndianBytes
        result.l2_bdaddr = bdaddr_t(b: (b[0], b[1], b[2], b[3], b[4], b[5]))
        return result
    }

    /// The peer in a `sockaddr_l2` returned by accept/getpeername.
    public static func peer(of address: sockaddr_l2) -> BluetoothPeer {
        let b = address.l2_bdaddr.b
        return BluetoothPeer(
            address: BluetoothAddress(littleEndianBytes: [b.0, b.1, b.2, b.3, b.4, b.5]),
            type: BluetoothAddressType(rawValue: address.l2_bdaddr_type) ?? .leRandom)
    }
}

extension L2CAPSecurityLevel {
    var kernelValue: UInt8 {
        switch self {
        case .low: UInt8(BT_SECURITY_LOW)
        case .medium: UInt8(BT_SECURITY_MEDIUM)
        case .high: UInt8(BT_SECURITY_HIGH)
        }
    }
}

/// `sockaddr_l2`-typed wrappers of bind / accept / getpeername / setsockopt on an L2CAP socket.
enum L2CAPCalls {
    static func bind(_ fd: Int32, _ address: sockaddr_l2, adapter: String) throws(BluetoothError) {
        var address = address
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        guard result == 0 else { throw bluetoothError("bind(L2CAP ATT on \(adapter))", errno: errno, adapter: adapter) }
    }

    static func setSecurity(_ fd: Int32, _ level: L2CAPSecurityLevel) throws(BluetoothError) {
        var security = bt_security(level: level.kernelValue, key_size: 0)
        let result = setsockopt(fd, SOL_BLUETOOTH, BT_SECURITY, &security, socklen_t(MemoryLayout<bt_security>.size))
        guard result == 0 else { throw bluetoothError("setsockopt(BT_SECURITY \(level))", errno: errno) }
    }

    /// The receive buffer asked for on ATT sockets. The ATT channel has no flow control: when a socket's
    /// buffer is full the kernel drops incoming Write Commands and Notifications silently. 2 MiB holds
    /// thousands of PDUs; SO_RCVBUFFORCE (CAP_NET_ADMIN) passes rmem_max.
    static let receiveBufferBytes: Int32 = 2 << 20

    /// Enlarges the receive buffer (best effort: a smaller buffer still works, it just drops sooner).
    static func enlargeReceiveBuffer(_ fd: Int32) {
        var size = receiveBufferBytes
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, length)
        }
    }

    static func peerName(_ fd: Int32) throws(BluetoothError) -> BluetoothPeer {
        var address = sockaddr_l2()
        var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard result == 0 else { throw bluetoothError("getpeername", errno: errno) }
        return L2CAPSocketAddress.peer(of: address)
    }

    static func setBlocking(_ fd: Int32, _ blocking: Bool) throws(BluetoothError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK) == 0 else {
            throw bluetoothError("fcntl(O_NONBLOCK)", errno: errno)
        }
    }
}
