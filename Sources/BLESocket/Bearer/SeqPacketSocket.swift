public import GATT
import Glibc

/// UNIX-domain SOCK_SEQPACKET sockets: the stand-in for the L2CAP ATT channel in tests and `--link unix:PATH`.
public enum SeqPacketSocket {
    /// A connected pair, as `socketpair(AF_UNIX, SOCK_SEQPACKET)` makes it.
    public static func pair() throws(ATTError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw .system("create a socket pair", errno: errno)
        }
        return (fds[0], fds[1])
    }

    /// Connects to the listener at `path`. Throws ``ATTError/io(operation:errno:message:)`` with the errno
    /// (ENOENT: nothing there, ECONNREFUSED: a stale socket file, EPROTOTYPE: not a SEQPACKET listener).
    public static func connect(path: String) throws(ATTError) -> Int32 {
        let fd = try socket()
        let status = withAddress(path) { address, length in Glibc.connect(fd, address, length) }
        guard status == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system("connect to \(path)", errno: code)
        }
        return fd
    }

    /// Listens at `path`, replacing a stale socket file there.
    public static func listen(path: String, backlog: Int32 = 4) throws(ATTError) -> Int32 {
        let fd = try socket()
        unlink(path)
        let status = withAddress(path) { address, length in bind(fd, address, length) }
        guard status == 0, Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .system("listen on \(path)", errno: code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// Waits for the next connection on `listener` without blocking a cooperative thread.
    public static func accept(_ listener: Int32) async throws(ATTError) -> Int32 {
        while true {
            try await FileDescriptorWaiter.readable(listener)
            let fd = Glibc.accept(listener, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                return fd
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED: continue
            case let code: throw .system("accept a connection", errno: code)
            }
        }
    }

    private static func socket() throws(ATTError) -> Int32 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("create a socket", errno: errno) }
        return fd
    }

    private static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path) - 1
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(capacity).enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
