public import GATT
import Glibc
import Synchronization

/// A UNIX SEQPACKET listener at a path, the peripheral side of `unix:PATH`: takes the path over only when no
/// live listener answers there, hands out each central as an ``ATTBearer``, and removes the socket file when
/// closed.
///
/// ```swift
/// let listener = try SeqPacketListener(path: "/tmp/mp.sock")
/// while let bearer = try await listener.accept() { /* serve GATT on bearer */ }
/// ```
public final class SeqPacketListener: Sendable {
    /// Why the path cannot be listened on; nothing at the path was changed.
    public enum PathUnavailable: Error, Equatable, CustomStringConvertible {
        /// A file that is not a socket is there.
        case notASocket(path: String)
        /// Another kind of socket answers there (a program that is not a SEQPACKET listener).
        case otherProgramListening(path: String)
        /// A live SEQPACKET listener (another msgpipe, say) accepts there.
        case listenerRunning(path: String)

        public var description: String {
            switch self {
            case let .notASocket(path): "cannot listen on unix:\(path): the file exists and is not a socket"
            case let .otherProgramListening(path): "cannot listen on unix:\(path): another program is listening there"
            case let .listenerRunning(path): "cannot listen on unix:\(path): another listener is running there"
            }
        }
    }

    public let path: String
    private let descriptor: Mutex<Int32?>

    /// Listens at `path`. Throws ``PathUnavailable`` when a live listener answers there or the file is not a socket; a
    /// stale socket file (nobody accepts on it) is replaced.
    public init(path: String) throws {
        try Self.checkAvailable(path)
        descriptor = Mutex(try SeqPacketSocket.listen(path: path))
        self.path = path
    }

    deinit { close() }

    /// The next central's bearer; nil once ``close()`` was called. Another listener's probe (a connection
    /// that hangs up without sending a byte) is skipped.
    public func accept() async throws(ATTError) -> ATTBearer? {
        while true {
            guard let listener = descriptor.withLock({ $0 }) else { return nil }
            let fd: Int32
            do {
                fd = try await SeqPacketSocket.accept(listener)
            } catch {
                if descriptor.withLock({ $0 }) == nil { return nil }
                throw error
            }
            if Self.isProbe(fd) {
                Glibc.close(fd)
                continue
            }
            return try ATTBearer(adopting: fd)
        }
    }

    /// Stops listening and removes the socket file; a pending ``accept()`` returns nil. Idempotent.
    public func close() {
        guard let fd = descriptor.withLock({ fd -> Int32? in defer { fd = nil }; return fd }) else { return }
        unlink(path)
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }

    /// Throws unless `path` is free or holds a stale socket file. A live listener there, or a file that is not
    /// a socket, is left alone.
    static func checkAvailable(_ path: String) throws(PathUnavailable) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // nothing there
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw .notASocket(path: path)
        }
        do {
            let probe = try SeqPacketSocket.connect(path: path)
            Glibc.close(probe)
        } catch {
            if case let .io(_, code, _) = error, code == ECONNREFUSED { return }  // stale: nobody accepts there
            if case let .io(_, code, _) = error, code == EPROTOTYPE {
                throw .otherProgramListening(path: path)
            }
            return  // anything else: let bind report it
        }
        throw .listenerRunning(path: path)
    }

    /// True when the connection on `fd`, just accepted, hung up without sending a byte within `milliseconds`:
    /// another listener's ``checkAvailable(_:)`` probe. A GATT central speaks first (Exchange MTU), so a real
    /// one ends the wait at once.
    static func isProbe(_ fd: Int32, grace milliseconds: Int32 = 1_000) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var ready: Int32
        repeat { ready = poll(&descriptor, 1, milliseconds) } while ready < 0 && errno == EINTR
        guard ready > 0, descriptor.revents & Int16(POLLHUP) != 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }
}
