import Glibc
import Synchronization

/// The self-pipe a poll thread adds to its `poll(2)` set so other threads can wake it: ``wake()`` writes a
/// byte, the thread polls ``descriptor`` for reading and calls ``drain()``. Non-blocking and close-on-exec; safe
/// to wake after ``close()`` (the descriptor numbers may by then belong to other files: nothing is written).
package final class WakePipe: Sendable {
    /// The end to poll for POLLIN.
    package let descriptor: Int32
    private let writeEnd: Int32
    private let closed = Mutex(false)

    /// Throws the errno of `pipe(2)`.
    package init() throws(WakePipeError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw WakePipeError(errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the next (or current) poll on ``descriptor`` return; nothing once closed.
    package func wake() {
        closed.withLock { closed in
            guard !closed else { return }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }
    }

    /// What ``wait(for:)`` saw.
    package enum Wait: Equatable {
        /// ``wake()`` was called; the pipe stays readable (so every thread polling it wakes) until ``drain()``.
        case woken
        /// `fd` has events: its `revents`.
        case events(Int16)
        /// `poll(2)` failed with this errno (never EINTR, which is retried).
        case failed(Int32)
    }

    /// Blocks until `fd` is readable (or hung up, or failed) or the pipe is woken; a wake wins over `fd`.
    package func wait(for fd: Int32) -> Wait {
        while true {
            var entries = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&entries, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if entries[1].revents != 0 { return .woken }
            if entries[0].revents != 0 { return .events(entries[0].revents) }
        }
    }

    /// Empties the pipe (after poll reported it readable).
    package func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &bytes, bytes.count) > 0 {}
    }

    /// Closes both ends; later ``wake()`` calls do nothing. Idempotent.
    package func close() {
        closed.withLock { closed in
            guard !closed else { return }
            closed = true
            Glibc.close(descriptor)
            Glibc.close(writeEnd)
        }
    }
}

/// `pipe(2)` failed.
package struct WakePipeError: Error {
    package let errno: Int32
}
