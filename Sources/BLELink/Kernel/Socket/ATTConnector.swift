import CBluetooth
import Glibc

/// The central side: connects an L2CAP socket on the ATT fixed channel to a peer, with a timeout.
public enum ATTConnector {
    /// Binds to `local` (the adapter's address), asks for `security`, connects to `peer` without blocking and
    /// waits up to `timeout`. The peer must be advertising connectable. Returns a blocking socket.
    public static func connect(
        from local: BluetoothAddress, adapterName: String, to peer: BluetoothPeer, timeout: Duration,
        security: L2CAPSecurityLevel = .low
    ) throws(BluetoothError) -> L2CAPConnection {
        let socket = try openBluetoothSocket(
            type: Int32(SOCK_SEQPACKET.rawValue) | O_NONBLOCK, protocol: BTPROTO_L2CAP)
        let fd = socket.rawValue
        try L2CAPCalls.bind(fd, L2CAPSocketAddress.make(address: local, type: .lePublic), adapter: adapterName)
        try L2CAPCalls.setSecurity(fd, security)
        L2CAPCalls.enlargeReceiveBuffer(fd)
        var remote = L2CAPSocketAddress.make(address: peer.address, type: peer.type)
        let result = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
            }
        }
        if result != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EAGAIN else {
                throw bluetoothError("connect(\(peer))", errno: code, adapter: adapterName)
            }
            let events = try pollDescriptor(fd, events: Int16(POLLOUT), until: .after(timeout))
            guard events != 0 else { throw .connectTimedOut(peer: peer.description, timeout: timeout) }
            var pending: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &length) == 0 else {
                throw bluetoothError("getsockopt(SO_ERROR)", errno: errno)
            }
            if pending != 0 {
                if pending == ETIMEDOUT { throw .connectTimedOut(peer: peer.description, timeout: timeout) }
                throw bluetoothError("connect(\(peer))", errno: pending, adapter: adapterName)
            }
        }
        try L2CAPCalls.setBlocking(fd, true)
        let connected = try L2CAPCalls.peerName(fd)
        return L2CAPConnection(socket: socket, peer: connected)
    }
}
