import Glibc

/// Starts a detached POSIX thread that runs one closure: for blocking system calls and poll loops, which must not
/// hold one of Swift's cooperative threads (there is one per core). The one way msgpipe's OS bindings start a thread.
package enum DetachedThread {
    /// Runs `work` on a new detached thread; returns 0, or pthread_create's error number (then `work` never runs).
    package static func spawn(_ work: @escaping @Sendable () -> Void) -> Int32 {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Work(work)).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        if status == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Work>.fromOpaque(context).release()
        }
        return status
    }

    private final class Work: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
