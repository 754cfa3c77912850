public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes `bytes` to a child process's standard input and closes it. A child that exited before reading them
/// is not an error here (its exit status tells the test what happened): the write fails with EPIPE instead of
/// SIGPIPE killing the whole test process, which a busy machine made happen to a child that timed out.
public func feed(_ bytes: some Sequence<UInt8>, to input: Pipe) {
    _ = brokenPipesIgnored
    try? input.fileHandleForWriting.write(contentsOf: Data(bytes))
    try? input.fileHandleForWriting.close()
}

/// SIGPIPE ignored in the test process, once, before its first write to a child.
private let brokenPipesIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

extension Process {
    /// `run()` with no signal blocked in the child. Tests run on Swift concurrency threads, which block nearly
    /// every signal, and a child inherits the spawning thread's mask: SIGTERM would never reach a Python peer,
    /// gatttool, mosquitto or what `timeout` runs, and each stop would wait out its bound before SIGKILL.
    public func runWithNoSignalBlocked() throws {
        var none = sigset_t(), saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try run()
    }
}
