import Glibc

/// Bytes collected and written to a descriptor (standard output by default) in large writes, short writes and
/// interruptions retried; ``flush()`` writes what is pending. Throws ``FileIOError/Operation/write``.
///
/// ```swift
/// var out = OutputBuffer()
/// try out.append(response.body)
/// try out.flush()
/// ```
public struct OutputBuffer {
    private var pending: [UInt8] = []
    private let descriptor: Int32

    /// A buffer for `descriptor` (1: standard output), which stays open (the caller owns it).
    public init(descriptor: Int32 = 1) {
        self.descriptor = descriptor
        pending.reserveCapacity(1 << 16)
    }

    /// Adds `bytes`; writes once 64 KiB are pending.
    public mutating func append(_ bytes: some Sequence<UInt8>) throws(FileIOError) {
        pending.append(contentsOf: bytes)
        if pending.count >= 1 << 16 { try flush() }
    }

    /// Writes everything pending ("cannot write output: …" when it cannot).
    public mutating func flush() throws(FileIOError) {
        try Self.write(pending, to: descriptor)
        pending.removeAll(keepingCapacity: true)
    }

    /// Writes all of `bytes` to `descriptor` now, unbuffered (short writes and interruptions retried): a
    /// diagnostic line on standard error (2) that must not wait. "cannot write output: …" when it cannot.
    ///
    /// ```swift
    /// try? OutputBuffer.write(Array("warning: low battery\n".utf8), to: 2)
    /// ```
    public static func write(_ bytes: [UInt8], to descriptor: Int32) throws(FileIOError) {
        do throws(DurableFiles.Failure) {
            try DurableFiles.write(bytes, to: descriptor, name: "output")
        } catch {
            throw FileIOError(operation: .write, description: error.description)
        }
    }

    /// Whether `descriptor` is a terminal (isatty(3)): where a program may draw progress, never into a file or
    /// a pipe.
    ///
    /// ```swift
    /// let drawsProgress = OutputBuffer.isTerminal(2)
    /// ```
    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }
}
