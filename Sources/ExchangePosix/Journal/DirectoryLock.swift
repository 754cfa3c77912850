import Glibc
import Synchronization

/// Holds a directory for one user at a time: across processes a POSIX record lock on a lock file in it, which a
/// child process never inherits (a `flock` is inherited, so a command spawned a moment before a reopen kept the
/// directory locked until its exec); within a process a table of the directories held, since a second
/// descriptor of the lock file, once closed, would let go of the first holder's record lock (POSIX locks belong
/// to the process, not the descriptor). Let go when the lock is deinitialized.
package final class DirectoryLock {
    /// A directory by device and inode, however it was named.
    private struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private static let held = Mutex<Set<Identity>>([])
    private let identity: Identity
    /// The lock file's descriptor (tests copy it to check that a child does not inherit the lock).
    package let descriptor: Int32

    /// Why taking the lock failed.
    package enum Failure: Error {
        /// Another holder, in this process or another, has the directory.
        case inUse
        /// `operation` failed with `errno`'s text `reason`.
        case system(operation: String, reason: String)
    }

    /// Takes `directory` (which must exist) by locking `directory/fileName`, created with mode 0600.
    package init(directory: String, fileName: String) throws(Failure) {
        var status = stat()
        guard stat(directory, &status) == 0 else { throw Self.failure("stat \(directory)") }
        let identity = Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        guard Self.held.withLock({ $0.insert(identity).inserted }) else { throw .inUse }
        let descriptor = Glibc.open(directory + "/" + fileName, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let error = Self.failure("open \(directory)/\(fileName)")
            _ = Self.held.withLock { $0.remove(identity) }
            throw error
        }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        guard fcntl(descriptor, F_SETLK, &lock) == 0 else {
            _ = Glibc.close(descriptor)
            _ = Self.held.withLock { $0.remove(identity) }
            throw .inUse
        }
        self.identity = identity
        self.descriptor = descriptor
    }

    deinit {
        _ = Glibc.close(descriptor)  // lets go of the record lock, before the table lets another holder in
        _ = Self.held.withLock { $0.remove(identity) }
    }

    private static func failure(_ operation: String) -> Failure {
        .system(operation: operation, reason: String(cString: strerror(errno)))
    }
}
