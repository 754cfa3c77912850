import GATT
import Glibc
import PollThread
import Synchronization

/// Waits for a descriptor to become readable on a short-lived thread, so no cooperative thread blocks in
/// `poll()`. Used for the rare waits (accepting a connection); bearers have their own poll thread.
enum FileDescriptorWaiter {
    private final class Wait: Sendable {
        let fd: Int32
        let cancelRead: Int32
        let cancelWrite: Int32
        let continuation = Mutex<CheckedContinuation<Result<Void, ATTError>, Never>?>(nil)

        init(fd: Int32, cancelRead: Int32, cancelWrite: Int32) {
            self.fd = fd
            self.cancelRead = cancelRead
            self.cancelWrite = cancelWrite
        }

        deinit {
            Glibc.close(cancelRead)
            Glibc.close(cancelWrite)
        }

        func finish(_ result: Result<Void, ATTError>) {
            continuation.withLock { $0.take() }?.resume(returning: result)
        }

        func run() {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: cancelRead, events: Int16(POLLIN), revents: 0)]
            var status: Int32
            repeat { status = poll(&fds, 2, -1) } while status < 0 && errno == EINTR
            if status < 0 {
                finish(.failure(.system("wait for the socket (poll)", errno: errno)))
            } else {
                finish(fds[1].revents != 0 ? .failure(.cancelled) : .success(()))
            }
        }
    }

    /// Returns when `fd` is readable; throws ``ATTError/cancelled`` if the task is cancelled first.
    static func readable(_ fd: Int32) async throws(ATTError) {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else { throw .system("create a cancellation pipe", errno: errno) }
        let wait = Wait(fd: fd, cancelRead: pipeFDs[0], cancelWrite: pipeFDs[1])
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, ATTError>, Never>) in
                wait.continuation.withLock { $0 = continuation }
                let status = DetachedThread.spawn { wait.run() }
                if status != 0 { wait.finish(.failure(.system("start a waiting thread", errno: status))) }
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(wait.cancelWrite, &byte, 1)
        }
        try result.get()
    }
}
