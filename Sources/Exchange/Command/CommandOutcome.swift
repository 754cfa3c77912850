/// How one run of the command ended.
public enum CommandOutcome: Sendable, Equatable {
    /// It exited with `code`; `output` is all it wrote to standard output.
    case exited(code: Int32, output: [UInt8])
    /// A signal killed it.
    case killedBySignal(Int32, output: [UInt8])
    /// It ran past the timeout and its process group was killed.
    case timedOut(output: [UInt8])
    /// It wrote more than the limit to standard output and its process group was killed.
    case outputTooLarge(limit: Int)
    /// The calling task was cancelled (serve got SIGTERM) and its process group was killed.
    case cancelled
}
