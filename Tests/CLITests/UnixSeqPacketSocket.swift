import Glibc

/// A raw SEQPACKET socket at a UNIX path, for the CLI tests that play a peer msgpipe did not write: a stale
/// socket a killed listener left, a central that only browses.
enum UnixSeqPacketSocket {
    enum Operation: String { case bind, connect }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A new SEQPACKET socket bound or connected to `path`; the caller closes it.
    static func open(_ operation: Operation, path: String) throws -> Int32 {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path.utf8.prefix(raw.count - 1)) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                switch operation {
                case .bind: bind(fd, pointer, length)
                case .connect: connect(fd, pointer, length)
                }
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "\(operation.rawValue) \(path): errno \(code)")
        }
        return fd
    }
}
