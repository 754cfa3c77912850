import Glibc
import Synchronization

/// A UNIX file descriptor passed over D-Bus (type `h`). A received one is a duplicate this value owns and
/// closes when released, unless ``take()`` handed it over; one being sent is duplicated by sd-bus when the
/// message is built, so the value keeps its own.
public final class DBusFileDescriptor: Sendable, Equatable, CustomStringConvertible {
    private let descriptor: Mutex<Int32?>

    /// Takes ownership of `fd`.
    public init(adopting fd: Int32) { descriptor = Mutex(fd) }

    deinit {
        if let fd = descriptor.withLock({ $0.take() }) { Glibc.close(fd) }
    }

    /// The descriptor, still owned by this value; nil once taken.
    public var rawValue: Int32? { descriptor.withLock { $0 } }

    /// Hands the descriptor to the caller, who must close it; nil if it was taken already.
    public func take() -> Int32? { descriptor.withLock { $0.take() } }

    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }

    public var description: String { rawValue.map { "fd \($0)" } ?? "fd (taken)" }
}
