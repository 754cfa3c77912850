import CBluetooth
import Glibc
import PollThread
import Synchronization

/// LE credit-based L2CAP channels (connection-oriented, a PSM instead of the ATT fixed channel): the socket
/// iOS's `CBL2CAPChannel` and Android's `BluetoothSocket` open. Both ends bind with an LE address type, or
/// the kernel makes a BR/EDR channel. The sockets are SOCK_SEQPACKET (one SDU per `send`/`recv`);
/// ``StreamLink`` carries Transport over them.
public enum L2CAPChannel {
    /// Dynamic LE PSMs any user may bind (0x80-0xFF); 0 asks the kernel for a free one.
    public static let dynamicPSMs: ClosedRange<UInt16> = 0x80 ... 0xFF

    /// The SDU size msgpipe asks to receive: the largest an LE channel allows.
    public static let receiveUnit = 65535

    /// A listening channel on `adapter` at `psm` (0: a free dynamic one, ``Listener/psm`` tells which).
    public struct Listener: ~Copyable, Sendable {
        private let socket: SocketDescriptor
        public let adapterName: String
        /// The PSM the channel listens on.
        public let psm: UInt16

        public init(adapter: BluetoothAdapter, psm: UInt16 = 0, security: L2CAPSecurityLevel = .low) throws(BluetoothError) {
            let socket = try openBluetoothSocket(type: Int32(SOCK_SEQPACKET.rawValue), protocol: BTPROTO_L2CAP)
            let fd = socket.rawValue
            try L2CAPCalls.bind(fd, L2CAPChannel.address(adapter.address, type: .lePublic, psm: psm), adapter: adapter.name)
            try L2CAPCalls.setSecurity(fd, security)
            L2CAPChannel.setReceiveUnit(fd)
            // A channel is answered only once accepted and sized (see `accept(until:)`).
            var deferred: Int32 = 1
            guard setsockopt(fd, SOL_BLUETOOTH, BT_DEFER_SETUP, &deferred, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw bluetoothError("setsockopt(BT_DEFER_SETUP) on \(adapter.name)", errno: errno, adapter: adapter.name)
            }
            guard listen(fd, 4) == 0 else {
                throw bluetoothError("listen(L2CAP channel on \(adapter.name))", errno: errno, adapter: adapter.name)
            }
            var bound = sockaddr_l2()
            var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
            _ = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            self.psm = UInt16(littleEndian: bound.l2_psm)
            self.socket = socket
            adapterName = adapter.name
        }

        /// The listening socket, for a poll beside others; owned by the listener.
        var descriptor: Int32 { socket.rawValue }

        /// No central is accepted after it. It does not wake a waiting ``accept(until:)``: Linux raises no poll
        /// event for a listening L2CAP socket that shuts down (``SharedListener`` wakes its own).
        public func shutdown() {
            _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR))
        }

        /// Waits for the next central's channel (nil deadline: forever); nil on timeout. The channel is answered
        /// only here, after its socket got its buffers: the peer sends nothing before, so nothing it sends can
        /// meet the kernel's default receive buffer (Linux 6.1 drops an LE channel's SDU that does not fit,
        /// silently, and gives the credit back all the same).
        public func accept(until deadline: Deadline? = nil) throws(BluetoothError) -> L2CAPConnection? {
            while true {
                guard try pollDescriptor(socket.rawValue, events: Int16(POLLIN), until: deadline) != 0 else { return nil }
                var peerAddress = sockaddr_l2()
                var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
                let fd = withUnsafeMutablePointer(to: &peerAddress) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(socket.rawValue, $0, &length) }
                }
                if fd < 0 {
                    if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                    throw bluetoothError("accept(L2CAP channel on \(adapterName))", errno: errno, adapter: adapterName)
                }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                L2CAPChannel.setReceiveUnit(fd)
                L2CAPChannel.answer(fd)
                return L2CAPConnection(socket: SocketDescriptor(adopting: fd), peer: L2CAPSocketAddress.peer(of: peerAddress))
            }
        }
    }

    /// A ``Listener`` shared between tasks: each ``accept()`` blocks a thread of its own (``BlockingCall``);
    /// ``stop()`` wakes it, from any thread, and every later accept returns nil. The wake is a self-pipe polled
    /// beside the listening socket: Linux's `shutdown(2)` does not wake an L2CAP socket's waiting `poll(2)`.
    public final class SharedListener: Sendable {
        private let listener: Listener
        private let wake: WakePipe
        private let stopped = Atomic<Bool>(false)
        /// The PSM the channel listens on.
        public let psm: UInt16

        /// Throws when the process has no descriptor left for the wake pipe.
        public init(_ listener: consuming Listener) throws(BluetoothError) {
            do throws(WakePipeError) {
                wake = try WakePipe()
            } catch {
                throw bluetoothError("pipe", errno: error.errno)
            }
            psm = listener.psm
            self.listener = listener
        }

        deinit { wake.close() }

        /// The next central's channel, handed over (the caller closes its descriptor); nil once stopped.
        public func accept() throws(BluetoothError) -> ConnectedATTSocket? {
            while !stopped.load(ordering: .acquiring) {
                let outcome = wake.wait(for: listener.descriptor)
                if case let .failed(code) = outcome { throw bluetoothError("poll", errno: code) }
                if stopped.load(ordering: .acquiring) { return nil }
                guard case .events = outcome else { continue }
                do throws(BluetoothError) {
                    // Readable: a connection is pending (or the socket failed); a zero deadline never blocks.
                    if let connection = try listener.accept(until: .after(.zero)) { return connection.handOver() }
                } catch {
                    if stopped.load(ordering: .acquiring) { return nil }
                    throw error
                }
            }
            return nil
        }

        /// Stops listening: a waiting ``accept()`` returns nil.
        public func stop() {
            guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
            listener.shutdown()
            wake.wake()
        }
    }

    /// Opens a channel to `peer`'s `psm` from `local`, waiting up to `timeout` (the peer must be connectable or
    /// already linked). Returns a blocking socket.
    public static func connect(
        from local: BluetoothAddress, adapterName: String, to peer: BluetoothPeer, psm: UInt16, timeout: Duration,
        security: L2CAPSecurityLevel = .low
    ) throws(BluetoothError) -> L2CAPConnection {
        let socket = try openBluetoothSocket(type: Int32(SOCK_SEQPACKET.rawValue) | O_NONBLOCK, protocol: BTPROTO_L2CAP)
        let fd = socket.rawValue
        try L2CAPCalls.bind(fd, address(local, type: .lePublic, psm: 0), adapter: adapterName)
        try L2CAPCalls.setSecurity(fd, security)
        setReceiveUnit(fd)
        var remote = address(peer.address, type: peer.type, psm: psm)
        let result = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
        }
        if result != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EAGAIN else {
                throw bluetoothError("connect(\(peer) PSM \(psm))", errno: code, adapter: adapterName)
            }
            let events = try pollDescriptor(fd, events: Int16(POLLOUT), until: .after(timeout))
            guard events != 0 else { throw .connectTimedOut(peer: "\(peer) PSM \(psm)", timeout: timeout) }
            var pending: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &pending, &length) == 0 else {
                throw bluetoothError("getsockopt(SO_ERROR)", errno: errno)
            }
            if pending != 0 {
                if pending == ETIMEDOUT { throw .connectTimedOut(peer: "\(peer) PSM \(psm)", timeout: timeout) }
                throw bluetoothError("connect(\(peer) PSM \(psm))", errno: pending, adapter: adapterName)
            }
        }
        try L2CAPCalls.setBlocking(fd, true)
        return L2CAPConnection(socket: socket, peer: try L2CAPCalls.peerName(fd))
    }

    /// The largest SDU the connected channel on `fd` may send (the peer's MTU), or nil when the kernel does not say.
    public static func sendUnit(_ fd: Int32) -> Int? {
        var value: UInt16 = 0
        var length = socklen_t(MemoryLayout<UInt16>.size)
        guard getsockopt(fd, SOL_BLUETOOTH, BT_SNDMTU, &value, &length) == 0, value > 0 else { return nil }
        return Int(value)
    }

    /// Accepts a channel that a listener with BT_DEFER_SETUP holds pending: the kernel sends the LE Credit Based
    /// Connection Response, with the channel's credits, on the socket's first read. MSG_PEEK leaves a channel
    /// that is already open as it is, and MSG_DONTWAIT never blocks.
    static func answer(_ fd: Int32) {
        var byte: UInt8 = 0
        _ = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    }

    /// A `sockaddr_l2` for a channel: `psm` set, no fixed channel.
    static func address(_ address: BluetoothAddress, type: BluetoothAddressType, psm: UInt16) -> sockaddr_l2 {
        var result = L2CAPSocketAddress.make(address: address, type: type, cid: 0)
        result.l2_psm = psm.littleEndian
        return result
    }

    /// Asks to receive SDUs up to ``receiveUnit`` (best effort: the kernel's default is smaller, and works),
    /// and for a send buffer of ``sendBufferBytes``: an SDU that does not fit the free send buffer is refused
    /// with EAGAIN as if the channel had no credits, so a too small buffer would stall a large SDU for good.
    static func setReceiveUnit(_ fd: Int32) {
        var unit = UInt16(receiveUnit)
        _ = setsockopt(fd, SOL_BLUETOOTH, BT_RCVMTU, &unit, socklen_t(MemoryLayout<UInt16>.size))
        var size = sendBufferBytes
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        L2CAPCalls.enlargeReceiveBuffer(fd)
    }

    /// The send buffer asked for on a channel socket: room for dozens of msgpipe's SDUs.
    static let sendBufferBytes: Int32 = 256 << 10
}
