import Backpressure
import BluetoothCore
package import GATT
import Glibc
import PollThread
import Synchronization

/// The state an ``ATTBearer`` shares with its poll thread. Other threads use the socket only under the lock;
/// the thread marks it closed under the lock and then closes it, so no send can reach a reused descriptor.
package final class BearerCore: Sendable {
    private struct State {
        /// Pauses reading when the inbox holds `capacity` PDUs and resumes once the consumer brought it down
        /// to half, so a slow consumer wakes the poll thread once per half inbox, not once per PDU.
        var marks: Watermarks
        /// End of stream or a receive error was seen: no more reading.
        var ended = false
        /// A send found the socket full: the thread polls for POLLOUT.
        var wantWrite = false
        /// The socket hung up while reading was paused: stop polling it until the consumer makes room.
        var parked = false
        var sendFailure: ATTError?
        var closed = false
        /// The thread closed the socket and the wake pipe: their numbers may already belong to other files.
        var descriptorsClosed = false
        /// Times the consumer let a paused thread read again (for tests).
        var resumes = 0
    }

    /// The largest PDU kept by default: one byte over the largest ATT_MTU, so an oversized PDU stays detectable.
    package static let attReceiveBufferSize = ATTOpcode.maximumMTU + 1

    /// The largest datagram read whole.
    let receiveBufferSize: Int

    /// The isReady contract on the live path: a send refused with EAGAIN waits here until POLLOUT signals it;
    /// a disconnect or close fails it, waking every waiting sender.
    let gate = ReadinessGate()
    /// Received PDUs, then the disconnect, for the single consumer. The poll thread only pushes while the
    /// watermarks let it read, so a push never finds it full; the disconnect bypasses the capacity (one).
    private let inbox: BoundedAsyncQueue<ATTBearerEvent, Never>
    private let receiveCapacity: Int
    private let fd: Int32
    private let waker: WakePipe
    private let state: Mutex<State>
    /// Counts the packets the kernel dropped on this socket (nil: not watched). See ``init(fd:receiveCapacity:receiveBufferSize:kernelDrops:receive:)``.
    private let kernelDrops: (@Sendable (Int32) -> UInt32?)?
    /// One non-blocking `recv(2)` into the buffer: its result, and `errno` when it is negative (tests stand in).
    private let receiveCall: @Sendable (Int32, UnsafeMutableRawBufferPointer) -> (Int, Int32)

    /// The system's `recv(2)`, non-blocking, reporting a datagram's whole length (MSG_TRUNC).
    package static let systemReceive: @Sendable (Int32, UnsafeMutableRawBufferPointer) -> (Int, Int32) = { fd, buffer in
        let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_TRUNC))
        return (count, count < 0 ? errno : 0)
    }

    /// `kernelDrops`, when given, turns a packet the kernel dropped into the end of the connection: a stream
    /// with a hole cannot be read on. The thread reads a batch, then asks `kernelDrops(fd)`; when it grew, the
    /// batch is withheld (its packets may lie after the hole) and the consumer gets
    /// ``ATTBearerEvent/disconnected(reason:)`` naming the loss. Every packet handed over was read before any
    /// drop. ``BearerCore/socketDrops(_:)`` reads Linux's count.
    package init(
        fd: Int32, receiveCapacity: Int, receiveBufferSize: Int = BearerCore.attReceiveBufferSize,
        kernelDrops: (@Sendable (Int32) -> UInt32?)? = nil,
        receive: @escaping @Sendable (Int32, UnsafeMutableRawBufferPointer) -> (Int, Int32) = BearerCore.systemReceive
    ) throws(ATTError) {
        self.receiveBufferSize = receiveBufferSize
        self.receiveCapacity = receiveCapacity
        self.kernelDrops = kernelDrops
        receiveCall = receive
        do throws(WakePipeError) {
            waker = try WakePipe()
        } catch {
            throw .system("create the bearer's wake-up pipe", errno: error.errno)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
        inbox = BoundedAsyncQueue(capacity: receiveCapacity)
        state = Mutex(State(marks: Watermarks(high: receiveCapacity, low: receiveCapacity / 2)))
    }

    package func start() throws(ATTError) {
        let status = DetachedThread.spawn { self.run() }
        guard status == 0 else {
            Glibc.close(fd)
            waker.close()
            throw .system("start the bearer's I/O thread", errno: status)
        }
    }

    // MARK: - Sending

    /// Sends `pdu` if the socket takes it now; false when it is full ("not ready") or another send is
    /// waiting ahead of it.
    func trySend(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool {
        do {
            return try gate.trySend { try attempt(pdu) }
        } catch {
            throw failure(error)
        }
    }

    /// Sends `pdu`, after the sends that came first, suspending while the socket is full.
    package func send(_ pdu: ArraySlice<UInt8>) async throws(ATTError) {
        do {
            try await gate.send { try attempt(pdu) }
        } catch {
            throw failure(error)
        }
    }

    /// Returns once the socket can take more (at once if it can).
    func waitUntilReady() async throws(ATTError) {
        do { try await gate.waitUntilReady() } catch { throw failure(error) }
    }

    /// The error callers see: ``ATTError/closed`` once closed locally (whatever failed the gate first), the
    /// bearer's own error, or ``ATTError/cancelled`` for a cancelled wait.
    private func failure(_ error: any Error) -> ATTError {
        if state.withLock({ $0.closed }) { return .closed }
        if let error = error as? ATTError { return error }
        if error is CancellationError { return .cancelled }
        return .io(operation: "send an ATT PDU", errno: 0, message: String(describing: error))
    }

    /// One `send(2)`: true if the socket took the PDU, false on EAGAIN (the thread then polls for POLLOUT).
    private func attempt(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool {
        let sent = try state.withLock { state throws(ATTError) -> Bool in
            if state.closed || state.descriptorsClosed { throw .closed }
            if let failure = state.sendFailure { throw failure }
            while true {
                let count = pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if count >= 0 { return true }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK, ENOBUFS:
                    state.wantWrite = true
                    return false
                case EPIPE, ECONNRESET, ENOTCONN, ESHUTDOWN:
                    let failure = ATTError.disconnected(reason: Self.reason(errno))
                    state.sendFailure = failure
                    throw failure
                case let code: throw .system("send an ATT PDU", errno: code)
                }
            }
        }
        if !sent { wake() }
        return sent
    }

    /// `body` with the socket while it is open (under the lock, so the number cannot belong to another file).
    func withOpenDescriptor<T>(_ body: (Int32) -> T) -> T? {
        state.withLock { state in state.descriptorsClosed ? nil : body(fd) }
    }

    /// The LE PHYs of the socket's connection, while it is open and the kernel tells them (nil for a UNIX socket).
    var phy: LinkPHY? { withOpenDescriptor { LinkPHY(socket: $0) } ?? nil }

    // MARK: - Receiving

    package func receive() async -> ATTBearerEvent? {
        if state.withLock({ $0.closed }) { return nil }
        let event = await inbox.next()
        let resume = state.withLock { state in
            let resume = state.marks.update(level: inbox.count) == .resume || state.parked
            state.parked = false
            if resume { state.resumes += 1 }
            return resume
        }
        if resume { wake() }
        return event
    }

    /// Times reading resumed after the inbox filled up (for tests).
    var resumes: Int { state.withLock { $0.resumes } }

    /// The thread got one PDU: queue it; pause reading at the high watermark.
    private func deliver(_ pdu: [UInt8]) {
        state.withLock { state in
            _ = try? inbox.tryPush(.pdu(pdu))
            _ = state.marks.update(level: inbox.count)
        }
    }

    // MARK: - Closing

    package func close() {
        state.withLock { $0.closed = true }
        inbox.finish()
        gate.fail(ATTError.closed)
        wake()
    }

    /// Wakes the poll thread (never once it closed the pipe: see ``WakePipe``).
    private func wake() { waker.wake() }

    // MARK: - The poll thread

    private func run() {
        var buffer = [UInt8](repeating: 0, count: receiveBufferSize)
        var pendingError: String?
        while true {
            let (wantRead, wantWrite, closed) = state.withLock { state in
                (!state.ended && !state.parked && !state.marks.isPaused, state.wantWrite, state.closed)
            }
            if closed { break }
            var events: Int16 = 0
            if wantRead { events |= Int16(POLLIN) }
            if wantWrite { events |= Int16(POLLOUT) }
            var fds = [
                pollfd(fd: events == 0 ? -1 : fd, events: events, revents: 0),
                pollfd(fd: waker.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                end("poll failed: \(Self.reason(errno))")
                break
            }
            if fds[1].revents != 0 { waker.drain() }
            let revents = Int32(fds[0].revents)
            if revents & Int32(POLLOUT) != 0 || (wantWrite && revents & Int32(POLLHUP | POLLERR) != 0) {
                state.withLock { $0.wantWrite = false }
                gate.signalReady()
            }
            if wantRead, revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 {
                let hungUp = revents & Int32(POLLHUP | POLLERR) != 0
                readAvailable(into: &buffer, pendingError: &pendingError, hungUp: hungUp)
            } else if revents & Int32(POLLHUP | POLLERR) != 0 {
                state.withLock { $0.parked = true }
            }
        }
        // Marked under the lock, closed outside it: no thread uses the number after the mark, and a close
        // that never returns (Linux 6.1 oopses in it for some failed links, killing this thread) leaves the
        // lock free, so the process goes on (docs/LAB.md, facts).
        state.withLock { $0.descriptorsClosed = true }
        Glibc.close(fd)
        waker.close()
    }

    /// Reads packets until the socket is empty, the inbox is full, or the connection ended. `pendingError`: the
    /// error a read reported while packets may still be queued behind it (see ``readOne(into:pendingError:hungUp:)``).
    /// `hungUp`: poll said POLLHUP or POLLERR (the connection is over once the socket is empty).
    private func readAvailable(into buffer: inout [UInt8], pendingError: inout String?, hungUp: Bool) {
        guard let kernelDrops else {
            while state.withLock({ !$0.marks.isPaused && !$0.ended && !$0.closed }) {
                switch readOne(into: &buffer, pendingError: &pendingError, hungUp: hungUp) {
                case let .packet(packet): deliver(packet)
                case .empty: return
                case let .ended(reason): end(reason)
                }
            }
            return
        }
        // Watched: a batch no larger than the inbox's room, handed over only once no drop came before it.
        while state.withLock({ !$0.marks.isPaused && !$0.ended && !$0.closed }) {
            var batch: [[UInt8]] = []
            var ending: String?
            let room = max(1, receiveCapacity - inbox.count)
            reading: while batch.count < room {
                switch readOne(into: &buffer, pendingError: &pendingError, hungUp: hungUp) {
                case let .packet(packet): batch.append(packet)
                case .empty: break reading
                case let .ended(reason): ending = reason; break reading
                }
            }
            if let dropped = kernelDrops(fd), dropped > 0 {
                end("the kernel dropped \(dropped) packet\(dropped == 1 ? "" : "s") of this connection (its receive buffer was full): the stream has a hole, \(batch.count) packet\(batch.count == 1 ? "" : "s") after it withheld")
                return
            }
            for packet in batch { deliver(packet) }
            if let ending { end(ending); return }
            if batch.count < room { return }
        }
    }

    private enum Read { case packet([UInt8]), empty, ended(String) }

    /// One `recv(2)`: a packet, nothing to read now, or the end of the connection. Linux reports a socket's
    /// error (ECONNRESET when the peer disconnects) once, on the next read or send, even while packets that arrived
    /// before it are still queued; after the peer's L2CAP Disconnection Request that read returns 0 instead. So
    /// the first error or end is kept in `pendingError` and reading goes on: the queued packets are handed on
    /// first, and the end comes when a read finds nothing more.
    private func readOne(into buffer: inout [UInt8], pendingError: inout String?, hungUp: Bool) -> Read {
        while true {
            let (count, code) = buffer.withUnsafeMutableBytes { receiveCall(fd, $0) }
            if count > 0 { return .packet(Array(buffer[0..<min(count, buffer.count)])) }
            if count == 0 {
                // A zero-length packet, not the end: the consumer ignores it.
                guard peerShutDown() else { return .packet([]) }
                if pendingError == nil {
                    pendingError = "the peer closed the connection"
                    continue
                }
                return .ended(pendingError ?? "the peer closed the connection")
            }
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                if let pendingError { return .ended(pendingError) }
                // Linux reports the error to whichever call comes first: when a send took it, the closed
                // socket reads EAGAIN from then on while poll says POLLHUP. Nothing more will come.
                if hungUp { return .ended(sendDisconnectReason() ?? "the connection closed") }
                return .empty
            default:
                if pendingError == nil {
                    pendingError = Self.reason(code)
                    continue
                }
                return .ended(pendingError ?? Self.reason(code))
            }
        }
    }

    /// Linux's count of packets dropped on `fd` because its receive buffer was full (SO_MEMINFO's
    /// SK_MEMINFO_DROPS); nil when the kernel does not say.
    @Sendable static func socketDrops(_ fd: Int32) -> UInt32? {
        let variables = 9  // SK_MEMINFO_VARS; SK_MEMINFO_DROPS is the last
        var info = [UInt32](repeating: 0, count: variables)
        var length = socklen_t(MemoryLayout<UInt32>.size * variables)
        let status = info.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, 55 /* SO_MEMINFO */, $0.baseAddress, &length) }
        guard status == 0, Int(length) >= MemoryLayout<UInt32>.size * variables else { return nil }
        return info[variables - 1]
    }

    /// Why a send found the connection gone, if one did.
    private func sendDisconnectReason() -> String? {
        state.withLock { state in
            if case let .disconnected(reason) = state.sendFailure { return reason }
            return nil
        }
    }

    /// `recv` returns 0 both for a zero-length packet and at the end of the stream; only the end comes with
    /// POLLRDHUP (or POLLHUP) on UNIX and L2CAP sockets. (Empty packets the peer sent just before closing are
    /// indistinguishable from the end, and so is what it queued after them.)
    private func peerShutDown() -> Bool {
        let readHangUp: Int16 = 0x2000  // POLLRDHUP, which Glibc's module does not export
        var probe = pollfd(fd: fd, events: readHangUp, revents: 0)
        guard poll(&probe, 1, 0) > 0 else { return false }
        return probe.revents & (readHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    /// The connection ended: sends fail from now on, and the consumer gets the disconnect after every PDU.
    private func end(_ reason: String) {
        state.withLock { state in
            state.ended = true
            if state.sendFailure == nil { state.sendFailure = .disconnected(reason: reason) }
        }
        gate.fail(ATTError.disconnected(reason: reason))
        try? inbox.pushIgnoringCapacity(.disconnected(reason: reason))
        inbox.finish()
    }

    static func reason(_ code: Int32) -> String {
        switch code {
        case ECONNRESET: "connection reset by peer (ECONNRESET)"
        case EPIPE: "broken pipe (EPIPE)"
        case ENOTCONN: "not connected (ENOTCONN)"
        case ETIMEDOUT: "connection timed out (ETIMEDOUT)"
        default: String(cString: strerror(code))
        }
    }
}
