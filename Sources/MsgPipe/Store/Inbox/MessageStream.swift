import Glibc
import Synchronization

/// Messages written one after the other to an open file descriptor (standard output by default), each batch
/// written whole before ``write(_:)`` returns and, where the descriptor is a regular file, synced (`fsync`).
/// A pipe or a terminal cannot be synced: there a message counts as kept once written. Nothing is named, so
/// publishing, discarding and recovering do nothing; the descriptor stays open (the caller owns it).
///
/// ```swift
/// let inbox = try MessageInbox(output: MessageStream(), journalDirectory: nil)   // messages' bytes on standard output
/// ```
public final class MessageStream: InboxOutput {
    /// The descriptor written to.
    public let descriptor: Int32
    /// Whether each batch is synced: the descriptor was a regular file when the stream was made.
    public let syncs: Bool
    /// One batch at a time, so batches never interleave.
    private let writing = Mutex(())

    /// A stream to `descriptor` (1: standard output).
    public init(descriptor: Int32 = 1) {
        self.descriptor = descriptor
        var status = stat()
        syncs = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Writes the bytes of each item in order, then syncs where ``syncs``. Throws ``InboxError/io(_:)``
    /// ("cannot write output: …", "cannot sync output: …"); part of the batch may have been written.
    public func write(_ items: [[UInt8]]) throws(InboxError) -> [String] {
        let bytes = items.flatMap { $0 }
        do throws(DurableFiles.Failure) {
            try writing.withLock { _ throws(DurableFiles.Failure) in
                try DurableFiles.write(bytes, to: descriptor, name: "output")
                if syncs, fsync(descriptor) != 0 {
                    throw DurableFiles.Failure(description: "cannot sync output: \(String(cString: strerror(errno)))")
                }
            }
        } catch {
            throw .io(error.description)
        }
        return items.map { _ in "" }
    }

    public func publish(_ names: [String]) throws(InboxError) {}

    public func discard(_ names: [String]) {}

    public func recover(publishing names: [String]) throws(InboxError) {}
}
