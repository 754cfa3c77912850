import Glibc

/// A point on the monotonic clock, for poll timeouts that survive EINTR and partial waits.
public struct Deadline: Sendable, Comparable {
    /// Nanoseconds on CLOCK_MONOTONIC.
    let nanoseconds: Int64

    /// Now plus `duration` (clamped to 0 ... 10^6 s).
    public static func after(_ duration: Duration) -> Deadline {
        let clamped = min(max(duration, .zero), .seconds(1_000_000))
        return Deadline(nanoseconds: now().nanoseconds + clamped.wholeNanoseconds)
    }

    static func now() -> Deadline {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Deadline(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }

    /// Milliseconds left, rounded up, 0 once passed.
    var remainingMilliseconds: Int32 {
        let left = nanoseconds - Self.now().nanoseconds
        return left <= 0 ? 0 : Int32(min((left + 999_999) / 1_000_000, Int64(Int32.max)))
    }

    var hasPassed: Bool { remainingMilliseconds == 0 }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
}

/// Waits until `descriptor` reports one of `events` or the deadline passes (nil: wait forever).
/// Returns the revents, or 0 on timeout. Retries on EINTR.
func pollDescriptor(_ descriptor: Int32, events: Int16, until deadline: Deadline?) throws(BluetoothError) -> Int16 {
    while true {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let result = poll(&entry, 1, deadline?.remainingMilliseconds ?? -1)
        if result > 0 { return entry.revents }
        if result == 0 { return 0 }
        let code = errno
        if code != EINTR { throw bluetoothError("poll", errno: code) }
    }
}

/// Blocks the calling thread for `duration` (used only between reconnect attempts, never to poll state).
func pause(for duration: Duration) {
    let nanoseconds = max(duration, .zero).wholeNanoseconds
    var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
}
