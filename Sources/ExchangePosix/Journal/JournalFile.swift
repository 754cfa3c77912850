package import Exchange
import Glibc

/// The journal's file: positioned reads, appends made durable with `fsync`, truncation, atomic replace.
/// Every failure is an ``ExchangeError/journal(_:)`` naming the operation and errno.
package struct JournalFile {
    package let path: String
    package private(set) var descriptor: Int32
    package private(set) var size: Int64

    package init(path: String) throws(ExchangeError) {
        self.path = path
        descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure("open \(path)") }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure("stat \(path)") }
        size = Int64(status.st_size)
    }

    package func close() {
        _ = Glibc.close(descriptor)
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    package func read(at offset: Int64, count: Int) throws(ExchangeError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = out.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if result < 0, errno == EINTR { continue }
            guard result >= 0 else { throw Self.failure("read \(path)") }
            if result == 0 { break }
            done += result
        }
        return Array(out.prefix(done))
    }

    /// Appends `bytes` and returns once they are on stable storage (`fsync`); returns their offset.
    /// On failure the file is cut back to its previous size, so no half record stays behind.
    package mutating func appendDurably(_ bytes: [UInt8]) throws(ExchangeError) -> Int64 {
        let offset = size
        do throws(ExchangeError) {
            _ = try append(bytes)
            guard fsync(descriptor) == 0 else { throw Self.failure("fsync \(path)") }
        } catch {
            _ = ftruncate(descriptor, off_t(offset))
            size = offset
            throw error
        }
        return offset
    }

    /// Cuts the file to `length` bytes, durably.
    package mutating func truncate(to length: Int64) throws(ExchangeError) {
        guard ftruncate(descriptor, off_t(length)) == 0, fsync(descriptor) == 0 else {
            throw Self.failure("truncate \(path)")
        }
        size = length
    }

    /// Atomically replaces this file with what `fill` appends to a new one: written to PATH.tmp,
    /// fsync'd, renamed over PATH, and the directory fsync'd. A crash leaves either the old or the new file.
    package mutating func replace(
        directory: String, fill: (inout JournalFile) throws(ExchangeError) -> Void
    ) throws(ExchangeError) {
        let temporaryPath = path + ".tmp"
        _ = unlink(temporaryPath)
        var temporary = try JournalFile(path: temporaryPath)
        do throws(ExchangeError) {
            try fill(&temporary)
            guard fsync(temporary.descriptor) == 0 else { throw Self.failure("fsync \(temporaryPath)") }
            guard rename(temporaryPath, path) == 0 else { throw Self.failure("rename \(temporaryPath)") }
        } catch {
            temporary.close()
            throw error
        }
        close()
        self = JournalFile(adopting: temporary.descriptor, path: path, size: temporary.size)
        try Self.syncDirectory(directory)
    }

    /// Appends `bytes` without syncing (``replace(directory:fill:)`` syncs once at the end).
    package mutating func append(_ bytes: [UInt8]) throws(ExchangeError) -> Int64 {
        let offset = size
        var done = 0
        while done < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw Self.failure("write \(path)") }
            done += result
        }
        size = offset + Int64(bytes.count)
        return offset
    }

    private init(adopting descriptor: Int32, path: String, size: Int64) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
    }

    /// Makes a directory's entries (a created or renamed file) durable.
    package static func syncDirectory(_ directory: String) throws(ExchangeError) {
        let descriptor = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open directory \(directory)") }
        defer { _ = Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("fsync directory \(directory)") }
    }

    package static func failure(_ operation: String) -> ExchangeError {
        .journal("\(operation) failed: \(String(cString: strerror(errno)))")
    }
}
