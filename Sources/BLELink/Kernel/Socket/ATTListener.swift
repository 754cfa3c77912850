import CBluetooth
import Glibc

/// The peripheral side: a listening L2CAP socket on the ATT fixed channel of one adapter.
/// Only the first listener gets the centrals, so a channel held by another process (bluetoothd, when it
/// runs) is refused up front with ``BluetoothError/attChannelInUse(adapter:)``.
public struct ATTListener: ~Copyable, Sendable {
    private let socket: SocketDescriptor
    /// The adapter it listens on, for messages.
    public let adapterName: String

    /// The listening descriptor: readable while a central waits to be accepted.
    var descriptor: Int32 { socket.rawValue }

    /// Binds to `address` (the adapter's public address) on CID 4, sets the security level, and listens.
    public init(
        address: BluetoothAddress, adapterName: String, security: L2CAPSecurityLevel = .low
    ) throws(BluetoothError) {
        let socket = try openBluetoothSocket(type: Int32(SOCK_SEQPACKET.rawValue), protocol: BTPROTO_L2CAP)
        try ATTChannelOwner.requireFree(address: address, adapterName: adapterName)
        try L2CAPCalls.bind(
            socket.rawValue, L2CAPSocketAddress.make(address: address, type: .lePublic), adapter: adapterName)
        try L2CAPCalls.setSecurity(socket.rawValue, security)
        L2CAPCalls.enlargeReceiveBuffer(socket.rawValue)
        guard listen(socket.rawValue, 1) == 0 else {
            throw bluetoothError("listen(L2CAP ATT on \(adapterName))", errno: errno, adapter: adapterName)
        }
        self.socket = socket
        self.adapterName = adapterName
    }

    /// Binds on `adapter`'s address.
    public init(adapter: BluetoothAdapter, security: L2CAPSecurityLevel = .low) throws(BluetoothError) {
        try self.init(address: adapter.address, adapterName: adapter.name, security: security)
    }

    /// Waits for the next central (nil deadline: forever) and returns the connection, or nil on timeout.
    public func accept(until deadline: Deadline? = nil) throws(BluetoothError) -> L2CAPConnection? {
        while true {
            guard try pollDescriptor(socket.rawValue, events: Int16(POLLIN), until: deadline) != 0 else { return nil }
            var peerAddress = sockaddr_l2()
            var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
            let fd = withUnsafeMutablePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.accept(socket.rawValue, $0, &length)
                }
            }
            if fd < 0 {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                throw bluetoothError("accept(L2CAP ATT on \(adapterName))", errno: errno, adapter: adapterName)
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            L2CAPCalls.enlargeReceiveBuffer(fd)
            return L2CAPConnection(
                socket: SocketDescriptor(adopting: fd), peer: L2CAPSocketAddress.peer(of: peerAddress))
        }
    }
}
