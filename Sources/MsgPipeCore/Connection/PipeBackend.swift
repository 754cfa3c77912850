/// Which Bluetooth stack a pipe uses.
public enum PipeBackend: String, Sendable, CaseIterable {
    /// `bluez` when bluetoothd owns org.bluez on the system bus, `kernel` otherwise.
    case auto
    /// Beside bluetoothd, through its D-Bus API: no root, the adapter stays bluetoothd's (the stock box).
    case bluez
    /// The kernel's L2CAP ATT channel and mgmt socket directly: bluetoothd must not hold the adapter.
    case kernel
}

/// The backoff between connection attempts, the one policy every backend and the CLI use.
public typealias ReconnectPolicy = ReconnectBackoff
