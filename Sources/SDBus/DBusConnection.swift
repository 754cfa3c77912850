import CSystemd
import DequeModule
import Glibc
import PollThread
import Synchronization

/// A connection to a D-Bus bus over sd-bus, driven by ONE thread of its own: sd-bus is not thread-safe, so
/// every sd-bus call happens there. The thread polls the bus's descriptor (`sd_bus_get_fd`,
/// `sd_bus_get_events`, `sd_bus_get_timeout`) and a pipe that Swift code writes when it queues work, then
/// runs the queued work and `sd_bus_process` until it has nothing left.
///
/// Method calls (``call(destination:path:interface:member:arguments:timeout:)``), signal matches
/// (``addMatch(_:handler:)``) and exported objects (``export(_:at:)``) are in their own files. Handlers of
/// matches and exported methods run on the bus thread: they must return quickly and never wait for the bus.
/// The thread runs until ``close()`` or until the bus goes away.
public final class DBusConnection: Sendable {
    typealias Job = @Sendable (OpaquePointer) -> Void

    private struct Jobs {
        var queue = Deque<Job>()
        var closing = false
        /// The thread ended: the bus is gone, queued work is refused.
        var finished = false
        var failure: DBusError?
        /// A caller is running housekeeping queued after the thread ended.
        var draining = false
    }

    /// Work queued by callers and not run yet, at most this many (housekeeping such as releasing a message
    /// bypasses the bound: it is bounded by the objects alive).
    public static let maximumQueuedJobs = 4096

    /// Bounds for every message this connection decodes.
    public let limits: DBusLimits
    /// The address given to ``init(address:limits:)``; nil for the system bus.
    public let address: String?
    private let bus: BusPointer
    /// Pending calls, matches and exports: touched only on the bus thread.
    let registry = DBusRegistry()
    private let jobs = Mutex(Jobs())
    /// The pipe that wakes the bus thread's poll when work is queued.
    private let waker: WakePipe
    private let thread = Mutex<pthread_t?>(nil)

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS` or /run/dbus/system_bus_socket), where bluetoothd lives.
    public static func system(limits: DBusLimits = DBusLimits()) throws(DBusError) -> DBusConnection {
        var bus: OpaquePointer?
        try DBusError.check(sd_bus_open_system(&bus), "connecting to the system D-Bus")
        guard let bus else { throw .closed }
        return try DBusConnection(bus: bus, address: nil, limits: limits)
    }

    /// The bus at `address` (e.g. `unix:path=/tmp/bus`, as `dbus-daemon --print-address` prints it).
    public convenience init(address: String, limits: DBusLimits = DBusLimits()) throws(DBusError) {
        var created: OpaquePointer?
        try DBusError.check(sd_bus_new(&created), "sd_bus_new")
        guard let bus = created else { throw .closed }
        do throws(DBusError) {
            try DBusError.check(sd_bus_set_address(bus, address), "using the D-Bus address \(address)")
            try DBusError.check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
            try DBusError.check(sd_bus_negotiate_fds(bus, 1), "sd_bus_negotiate_fds")
            try DBusError.check(sd_bus_start(bus), "connecting to the D-Bus at \(address)")
        } catch {
            sd_bus_unref(bus)
            throw error
        }
        try self.init(bus: bus, address: address, limits: limits)
    }

    private init(bus: OpaquePointer, address: String?, limits: DBusLimits) throws(DBusError) {
        do throws(WakePipeError) {
            waker = try WakePipe()
        } catch {
            sd_bus_flush_close_unref(bus)
            throw .system(operation: "pipe", errno: error.errno)
        }
        self.bus = BusPointer(pointer: bus)
        self.limits = limits
        self.address = address
        let status = DetachedThread.spawn { self.run() }
        guard status == 0 else {
            jobs.withLock { $0.finished = true }
            sd_bus_flush_close_unref(bus)
            waker.close()
            throw .system(operation: "pthread_create", errno: status)
        }
    }

    /// Closes the connection: pending calls fail with ``DBusError/closed``, exported objects and matches go
    /// away with it (a name it owned is released by the bus). Idempotent.
    public func close() {
        jobs.withLock { $0.closing = true }
        wake()
    }

    /// Why the connection ended (nil while it runs, or after a local ``close()``).
    public var failure: DBusError? { jobs.withLock { $0.failure } }

    /// True while the bus thread runs.
    public var isOpen: Bool { jobs.withLock { !$0.finished && !$0.closing } }

    // MARK: - Running work on the bus thread

    /// Queues `job` for the bus thread; false (and `job` not run) when the connection is closed or the queue
    /// is full.
    @discardableResult
    func enqueue(_ job: @escaping Job) -> Bool {
        let accepted = jobs.withLock { jobs in
            guard !jobs.finished, !jobs.closing, jobs.queue.count < Self.maximumQueuedJobs else { return false }
            jobs.queue.append(job)
            return true
        }
        if accepted { wake() }
        return accepted
    }

    /// Queues housekeeping (releasing a message or slot, answering a call) that must run even past the bound
    /// and even while closing. It never touches the bus itself, only objects that hold their own reference to
    /// it. After the thread ended it runs on the caller's thread, one drainer at a time (so still one thread at
    /// a time touches the sd-bus objects that remain).
    func enqueueHousekeeping(_ job: @escaping @Sendable () -> Void) {
        let (drain, wakeThread) = jobs.withLock { jobs in
            jobs.queue.append { _ in job() }
            guard jobs.finished else { return (false, true) }
            guard !jobs.draining else { return (false, false) }
            jobs.draining = true
            return (true, false)
        }
        if wakeThread { wake() }
        if drain { drainAfterEnd() }
    }

    /// Runs housekeeping queued after the thread ended, outside the lock (a job may queue more).
    private func drainAfterEnd() {
        while true {
            let batch = jobs.withLock { jobs in
                let batch = Array(jobs.queue)
                jobs.queue.removeAll()
                if batch.isEmpty { jobs.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            for job in batch { job(bus.pointer) }
        }
    }

    /// Runs `body` on the bus thread and returns its result.
    func perform<T: Sendable>(_ body: @escaping @Sendable (OpaquePointer) throws(DBusError) -> T) async throws(DBusError) -> T {
        let result: Result<T, DBusError> = await withCheckedContinuation { continuation in
            let accepted = enqueue { bus in
                do throws(DBusError) { continuation.resume(returning: .success(try body(bus))) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if !accepted { continuation.resume(returning: .failure(refusal)) }
        }
        return try result.get()
    }

    /// Why ``enqueue(_:)`` refused work.
    var refusal: DBusError {
        jobs.withLock { jobs in
            if jobs.finished || jobs.closing { return jobs.failure ?? .closed }
            return .limitExceeded(what: "work queued for the bus thread", limit: Self.maximumQueuedJobs)
        }
    }

    /// True on the bus thread.
    var isBusThread: Bool {
        thread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    private func wake() { waker.wake() }

    // MARK: - The bus thread

    private func run() {
        thread.withLock { $0 = pthread_self() }
        let bus = self.bus.pointer
        var failure: DBusError?
        while true {
            let (batch, closing) = jobs.withLock { jobs in
                let batch = Array(jobs.queue)
                jobs.queue.removeAll()
                return (batch, jobs.closing)
            }
            for job in batch { job(bus) }
            if closing { break }
            var status: Int32
            repeat { status = sd_bus_process(bus, nil) } while status > 0
            if status < 0 {
                failure = status == -ECONNRESET || status == -ENOTCONN
                    ? .remote(name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus went away")
                    : .system(operation: "sd_bus_process", errno: -status)
                break
            }
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                pollfd(fd: waker.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            var deadline: UInt64 = .max
            _ = sd_bus_get_timeout(bus, &deadline)
            if poll(&descriptors, 2, Self.milliseconds(until: deadline)) < 0, errno != EINTR {
                failure = .system(operation: "poll", errno: errno)
                break
            }
            if descriptors[1].revents != 0 { waker.drain() }
        }
        let leftover = jobs.withLock { jobs in
            jobs.closing = true
            jobs.failure = failure
            let leftover = Array(jobs.queue)
            jobs.queue.removeAll()
            return leftover
        }
        for job in leftover { job(bus) }
        registry.tearDown(failure ?? .closed)
        jobs.withLock { jobs in
            jobs.finished = true
            jobs.draining = true
        }
        waker.close()
        sd_bus_flush_close_unref(bus)
        drainAfterEnd()
    }

    /// `poll`'s timeout for sd-bus's absolute CLOCK_MONOTONIC deadline in microseconds (max: none).
    private static func milliseconds(until deadline: UInt64) -> Int32 {
        guard deadline != .max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        guard deadline > nowMicroseconds else { return 0 }
        return Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
    }
}

/// An sd-bus object pointer handed between threads; only the bus thread dereferences it.
struct BusPointer: @unchecked Sendable {
    let pointer: OpaquePointer
}
