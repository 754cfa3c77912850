import GATT
import DequeModule
import Glibc
import Synchronization

/// The state an ``ATTBearer`` shares with its poll thread. The socket is used only under the lock, and
/// closed by the thread, so no send can reach a reused descriptor.
final class BearerCore: Sendable {
    private struct State {
        var inbox: Deque<ATTBearerEvent> = []
        var receiver: (id: UInt64, continuation: CheckedContinuation<ATTBearerEvent?, Never>)?
        var nextReceiverID: UInt64 = 0
        /// End of stream or a receive error was seen: no more reading.
        var ended = false
        /// The disconnect event was handed to the consumer: `receive` answers nil from now on.
        var finished = false
        /// A send found the socket full: the thread polls for POLLOUT.
        var wantWrite = false
        /// The socket hung up while the inbox was full: stop polling it until the consumer makes room.
        var parked = false
        var sendFailure: ATTError?
        var closed = false
        /// The thread closed the socket and the wake pipe: their numbers may already belong to other files.
        var descriptorsClosed = false
    }

    /// The largest PDU kept: one byte over the largest ATT_MTU, so an oversized PDU stays detectable.
    static let receiveBufferSize = ATTOpcode.maximumMTU + 1

    let gate = ReadinessGate()
    private let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let capacity: Int
    private let state = Mutex(State())

    init(fd: Int32, receiveCapacity: Int) throws(ATTError) {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw .io(operation: "pipe", errno: errno) }
        for descriptor in pipeFDs + [fd] {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        self.fd = fd
        wakeRead = pipeFDs[0]
        wakeWrite = pipeFDs[1]
        capacity = receiveCapacity
    }

    func start() throws(ATTError) {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<BearerCore>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<BearerCore>.fromOpaque(context).release()
            Glibc.close(fd)
            Glibc.close(wakeRead)
            Glibc.close(wakeWrite)
            throw .io(operation: "pthread_create", errno: status)
        }
        pthread_detach(thread)
    }

    // MARK: - Sending

    func trySend(_ pdu: ArraySlice<UInt8>) throws(ATTError) -> Bool {
        let sent = try state.withLock { state throws(ATTError) -> Bool in
            if state.closed { throw .closed }
            if let failure = state.sendFailure { throw failure }
            while true {
                let count = pdu.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if count >= 0 { return true }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK, ENOBUFS:
                    state.wantWrite = true
                    gate.close()
                    return false
                case EPIPE, ECONNRESET, ENOTCONN, ESHUTDOWN:
                    let failure = ATTError.disconnected(reason: Self.reason(errno))
                    state.sendFailure = failure
                    throw failure
                case let code: throw .io(operation: "send", errno: code)
                }
            }
        }
        if !sent { wake() }
        return sent
    }

    // MARK: - Receiving

    func receive() async -> ATTBearerEvent? {
        let id = state.withLock { state in
            defer { state.nextReceiverID += 1 }
            return state.nextReceiverID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ATTBearerEvent?, Never>) in
                var wakeThread = false
                let immediate: ATTBearerEvent?? = state.withLock { state in
                    if let event = state.inbox.popFirst() {
                        wakeThread = state.inbox.count == capacity - 1 || state.parked
                        state.parked = false
                        if case .disconnected = event { state.finished = true }
                        return .some(event)
                    }
                    if state.closed || state.finished || Task.isCancelled { return .some(nil) }
                    state.receiver = (id, continuation)
                    return nil
                }
                if wakeThread { wake() }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let receiver = state.withLock { state in
                state.receiver?.id == id ? state.receiver.take() : nil
            }
            receiver?.continuation.resume(returning: nil)
        }
    }

    private func deliver(_ event: ATTBearerEvent) {
        let receiver = state.withLock { state -> CheckedContinuation<ATTBearerEvent?, Never>? in
            if case .disconnected = event { state.ended = true }
            if let receiver = state.receiver.take() {
                if case .disconnected = event { state.finished = true }
                return receiver.continuation
            }
            state.inbox.append(event)
            return nil
        }
        receiver?.resume(returning: event)
    }

    // MARK: - Closing

    func close() {
        let receiver = state.withLock { state in
            state.closed = true
            return state.receiver.take()
        }
        receiver?.continuation.resume(returning: nil)
        gate.fail(.closed)
        wake()
    }

    /// Wakes the poll thread. Under the lock, so it never writes to the pipe's number once the thread closed it
    /// (the number may by then be another socket's, and the byte a PDU on it).
    private func wake() {
        state.withLock { state in
            guard !state.descriptorsClosed else { return }
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    // MARK: - The poll thread

    private func run() {
        var buffer = [UInt8](repeating: 0, count: Self.receiveBufferSize)
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            let (wantRead, wantWrite, closed) = state.withLock { state in
                (!state.ended && !state.parked && state.inbox.count < capacity, state.wantWrite, state.closed)
            }
            if closed { break }
            var events: Int16 = 0
            if wantRead { events |= Int16(POLLIN) }
            if wantWrite { events |= Int16(POLLOUT) }
            var fds = [
                pollfd(fd: events == 0 ? -1 : fd, events: events, revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                deliver(.disconnected(reason: "poll failed: \(Self.reason(errno))"))
                break
            }
            if fds[1].revents != 0 { while read(wakeRead, &drain, drain.count) > 0 {} }
            let revents = Int32(fds[0].revents)
            if revents & Int32(POLLOUT) != 0 || (wantWrite && revents & Int32(POLLHUP | POLLERR) != 0) {
                state.withLock { $0.wantWrite = false }
                gate.open()
            }
            if wantRead, revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 {
                readAvailable(into: &buffer)
            } else if revents & Int32(POLLHUP | POLLERR) != 0 {
                state.withLock { $0.parked = true }
            }
        }
        state.withLock { state in
            state.descriptorsClosed = true
            Glibc.close(fd)
            Glibc.close(wakeRead)
            Glibc.close(wakeWrite)
        }
    }

    /// Reads packets until the socket is empty, the inbox is full, or the connection ended.
    private func readAvailable(into buffer: inout [UInt8]) {
        while state.withLock({ $0.inbox.count < capacity && !$0.ended && !$0.closed }) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_TRUNC)) }
            if count > 0 {
                deliver(.pdu(Array(buffer[0..<min(count, buffer.count)])))
            } else if count == 0 {
                guard peerShutDown() else {
                    deliver(.pdu([]))  // a zero-length packet, not the end: the consumer ignores it
                    continue
                }
                end("the peer closed the connection")
            } else {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return
                case let code: end(Self.reason(code))
                }
            }
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

    private func end(_ reason: String) {
        gate.fail(.disconnected(reason: reason))
        state.withLock { state in
            if state.sendFailure == nil { state.sendFailure = .disconnected(reason: reason) }
        }
        deliver(.disconnected(reason: reason))
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
