import Glibc

/// Owns one open file descriptor and closes it when dropped; ``release()`` hands ownership to the caller
/// (e.g. to a bearer that drives the fd with poll and closes it itself).
public struct SocketDescriptor: ~Copyable, Sendable {
    /// The descriptor number; valid while this value lives.
    public let rawValue: Int32

    /// Takes ownership of an open descriptor.
    public init(adopting descriptor: Int32) { rawValue = descriptor }

    deinit { _ = Glibc.close(rawValue) }

    /// Gives the descriptor up without closing it: the caller must close it.
    public consuming func release() -> Int32 {
        let descriptor = rawValue
        discard self
        return descriptor
    }

    /// Closes the descriptor now.
    public consuming func close() {}
}

/// Maps a failed system call's errno to the error a user can act on.
func bluetoothError(_ call: String, errno code: Int32, adapter: String = "the adapter") -> BluetoothError {
    switch code {
    case EAFNOSUPPORT, EPROTONOSUPPORT: .kernelWithoutBluetooth
    case EPERM, EACCES: .permissionDenied(operation: call)
    case EADDRINUSE: .attChannelInUse(adapter: adapter)
    case ENODEV, EADDRNOTAVAIL: .noAdapter(selector: adapter)
    case ENETDOWN: .adapterDown(adapter: adapter)
    default: .system(call: call, errno: code, message: String(cString: strerror(code)))
    }
}

/// Opens an `AF_BLUETOOTH` socket, or throws the mapped error (``BluetoothError/kernelWithoutBluetooth`` on a
/// kernel without Bluetooth).
func openBluetoothSocket(type: Int32, protocol proto: Int32) throws(BluetoothError) -> SocketDescriptor {
    // SOCK_CLOEXEC and SOCK_NONBLOCK share O_CLOEXEC's and O_NONBLOCK's values on Linux.
    let fd = socket(AF_BLUETOOTH, type | O_CLOEXEC, proto)
    guard fd >= 0 else { throw bluetoothError("socket(AF_BLUETOOTH)", errno: errno) }
    return SocketDescriptor(adopting: fd)
}
