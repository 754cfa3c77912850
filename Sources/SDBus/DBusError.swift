import Glibc

/// Why a D-Bus operation failed: an error reply from the peer (its D-Bus error name and message), a local
/// sd-bus or system call failure, a message of the wrong shape, a limit crossed, or the connection closed.
public enum DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer answered with an error, e.g. `org.freedesktop.DBus.Error.ServiceUnknown`.
    case remote(name: String, message: String)
    /// sd-bus or the kernel refused `operation` with `errno`.
    case system(operation: String, errno: Int32)
    /// A message or value that does not have the shape the caller expects.
    case malformed(String)
    /// A count or length from the bus crossed one of ``DBusLimits``.
    case limitExceeded(what: String, limit: Int)
    /// The connection was closed (locally, or the bus went away).
    case closed

    /// The D-Bus error name of a ``remote(name:message:)`` error.
    public var name: String? {
        if case let .remote(name, _) = self { return name }
        return nil
    }

    /// An error reply named `org.freedesktop.DBus.Error.Failed`.
    public static func failed(_ message: String) -> DBusError {
        .remote(name: "org.freedesktop.DBus.Error.Failed", message: message)
    }

    /// An error reply named `org.freedesktop.DBus.Error.InvalidArgs`.
    public static func invalidArguments(_ message: String) -> DBusError {
        .remote(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    public var description: String {
        switch self {
        case let .remote(name, message): message.isEmpty ? name : "\(name): \(message)"
        case let .system(operation, code): "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        case let .malformed(what): "malformed D-Bus message: \(what)"
        case let .limitExceeded(what, limit): "D-Bus message over the limit: \(what) (at most \(limit))"
        case .closed: "the D-Bus connection is closed"
        }
    }

    /// An sd-bus call's negative return value as an error.
    static func check(_ status: Int32, _ operation: @autoclosure () -> String) throws(DBusError) {
        if status < 0 { throw .system(operation: operation(), errno: -status) }
    }
}
