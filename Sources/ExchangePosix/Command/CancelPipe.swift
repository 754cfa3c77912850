import Exchange
import Glibc
import Synchronization

/// A pipe whose read end becomes readable when ``fire()`` is called: wakes a `poll` loop on another
/// thread when the task waiting for it is cancelled. Safe to fire after ``close()``.
final class CancelPipe: Sendable {
    let readDescriptor: Int32
    private let writeDescriptor: Mutex<Int32?>

    init() throws(ExchangeError) {
        var descriptors: [Int32] = [-1, -1]
        guard makePipe(&descriptors) else {
            throw .commandNotStarted("pipe: \(String(cString: strerror(errno)))")
        }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
        readDescriptor = descriptors[0]
        writeDescriptor = Mutex(descriptors[1])
    }

    func fire() {
        writeDescriptor.withLock { descriptor in
            guard let descriptor else { return }
            var byte: UInt8 = 1
            _ = write(descriptor, &byte, 1)
        }
    }

    func close() {
        writeDescriptor.withLock { descriptor in
            if let open = descriptor { _ = Glibc.close(open) }
            descriptor = nil
        }
        _ = Glibc.close(readDescriptor)
    }
}

/// `pipe` with both ends close-on-exec (Glibc's Swift overlay does not export `pipe2`).
func makePipe(_ descriptors: inout [Int32]) -> Bool {
    guard pipe(&descriptors) == 0 else { return false }
    for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    return true
}
