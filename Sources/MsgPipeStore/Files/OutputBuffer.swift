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
        do throws(DurableFiles.Failure) {
            try DurableFiles.write(pending, to: descriptor, name: "output")
        } catch {
            throw FileIOError(operation: .write, description: error.description)
        }
        pending.removeAll(keepingCapacity: true)
    }
}
