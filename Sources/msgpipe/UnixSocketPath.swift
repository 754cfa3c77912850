import BLELink
import Glibc

/// The socket file of `--link unix:PATH` on the peripheral side: a listener takes PATH over only when no
/// live listener answers there, and tells a probe (a connection closed before it sent a byte) from a central.
enum UnixSocketPath {
    /// Why PATH cannot be listened on.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Throws unless PATH is free or holds a stale socket file (one nobody listens on any more), which the
    /// listener then replaces. A live listener there, or a file that is not a socket, is left alone.
    static func checkAvailable(_ path: String) throws(Refusal) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // nothing there
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw Refusal(description: "cannot listen on unix:\(path): the file exists and is not a socket")
        }
        do {
            let probe = try SeqPacketSocket.connect(path: path)
            Glibc.close(probe)
        } catch {
            if case let .io(_, code, _) = error, code == ECONNREFUSED { return }  // stale: nobody accepts there
            if case let .io(_, code, _) = error, code == EPROTOTYPE {
                throw Refusal(description: "cannot listen on unix:\(path): another program is listening there")
            }
            return  // anything else: let bind report it
        }
        throw Refusal(description: "cannot listen on unix:\(path): another listener is running there")
    }

    /// True when the central on `fd`, just accepted, hung up without sending a byte within a grace period:
    /// another listener's ``checkAvailable(_:)`` probe, not a central to serve or count. A GATT central speaks
    /// first (Exchange MTU), so a real one ends the wait at once; one that stays silent longer is served as
    /// usual. (A short blocking wait: connections are served one at a time, nothing else waits for it.)
    static func isProbe(_ fd: Int32, grace milliseconds: Int32 = 1_000) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var ready: Int32
        repeat { ready = poll(&descriptor, 1, milliseconds) } while ready < 0 && errno == EINTR
        guard ready > 0, descriptor.revents & Int16(POLLHUP) != 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }
}
