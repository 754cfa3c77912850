import GATT
import Glibc
import PollThread

/// Runs a blocking call (accept, connect, scan; a test's process start) on a thread of its own and resumes
/// the caller when it returns, so async code never blocks a cooperative thread: there is one per core, shared by
/// every task of the process.
///
/// ```swift
/// let socket = try await BlockingCall.run { () throws(BluetoothError) in try listener.accept() }
/// ```
public enum BlockingCall {
    /// Runs `body` on a new detached thread; returns or throws what `body` did. When no thread can be started
    /// (the process is out of threads), throws `threadStartFailure` of pthread_create's error number and `body`
    /// never runs: run here instead, it could hold a cooperative thread for ever (an accept).
    public static func run<T: Sendable, E: Error>(
        threadStartFailure: (Int32) -> E, _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        try await run(threadStartFailure: threadStartFailure, startThread: DetachedThread.spawn, body)
    }

    /// ``run(threadStartFailure:_:)`` for a body that throws any error, or none: a thread that cannot start
    /// throws `ATTError.io` of `pthread_create`'s error ("cannot start a thread: ...").
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(threadStartFailure: { ATTError.system("start a thread", errno: $0) }, body)
    }

    /// ``run(threadStartFailure:_:)`` with the thread started by `startThread` (returns 0, or an error number
    /// and then never runs its closure).
    package static func run<T: Sendable, E: Error>(
        threadStartFailure: (Int32) -> E, startThread: (@escaping @Sendable () -> Void) -> Int32,
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            let status = startThread { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
            if status != 0 { continuation.resume(returning: .failure(threadStartFailure(status))) }
        }
        return try result.get()
    }
}
