public import GATT

/// Which Bluetooth stack a pipe uses, with what only that stack honours. Only the kernel stack takes options
/// of its own (``KernelOptions``): ``bluez`` carries none, so they cannot be handed to bluetoothd.
///
/// ```swift
/// options.backend = .bluez
/// options.backend = .kernel(KernelOptions(connectionParameters: try ConnectionParameterRequest(
///     interval: "7.5-15", latency: nil, supervisionTimeout: nil, phy: "2m")))
/// ```
public struct PipeBackend: Sendable, Equatable, CustomStringConvertible {
    /// A stack's name alone, as the command line spells it (`--backend auto|bluez|kernel`).
    public enum Name: String, Sendable, CaseIterable {
        case auto, bluez, kernel
    }

    /// The stack chosen.
    public let name: Name
    /// The kernel stack's options: those of ``kernel(_:)``, or of ``auto(kernel:)`` (applied when auto picks
    /// the kernel); nil for ``bluez``.
    public let kernelOptions: KernelOptions?

    private init(_ name: Name, _ kernelOptions: KernelOptions?) {
        (self.name, self.kernelOptions) = (name, kernelOptions)
    }

    /// `bluez` when bluetoothd owns org.bluez on the system bus, `kernel` (with no options) otherwise.
    public static let auto = PipeBackend(.auto, KernelOptions())
    /// As ``auto``; when auto picks the kernel it applies `options`. When it picks bluetoothd and `options` ask
    /// for connection parameters or a PHY, connecting or serving throws
    /// `MessagePipeError.connectionParametersThroughBluetoothd(_:)` before bluetoothd is asked anything; a bond
    /// directory does not apply there (bluetoothd keeps bonds).
    public static func auto(kernel options: KernelOptions) -> PipeBackend { PipeBackend(.auto, options) }
    /// Beside bluetoothd, through its D-Bus API: no root, the adapter stays bluetoothd's (the stock box).
    public static let bluez = PipeBackend(.bluez, nil)
    /// The kernel's L2CAP ATT channel and mgmt socket directly, with no options: bluetoothd must not hold the
    /// adapter.
    public static let kernel = PipeBackend(.kernel, KernelOptions())
    /// The kernel stack with `options`.
    public static func kernel(_ options: KernelOptions) -> PipeBackend { PipeBackend(.kernel, options) }

    /// The backend a user named (`--backend NAME`), with `kernel` where the kernel may run: ``auto(kernel:)``,
    /// ``kernel(_:)``, or ``bluez``, which takes no kernel options: a bond directory does not apply there
    /// (bluetoothd keeps bonds), connection parameters or a PHY throw
    /// `MessagePipeError.connectionParametersThroughBluetoothd(_:)` with the remedy.
    ///
    /// ```swift
    /// options.backend = try PipeBackend(.bluez, kernel: KernelOptions(bondDirectory: "/var/lib/msgpipe/bonds"))
    /// ```
    public init(_ name: Name, kernel options: KernelOptions) throws(MessagePipeError) {
        switch name {
        case .auto: self = .auto(kernel: options)
        case .kernel: self = .kernel(options)
        case .bluez:
            if let parameters = options.requestedConnectionParameters { throw .connectionParametersThroughBluetoothd(parameters) }
            self = .bluez
        }
    }

    /// The name: `auto`, `bluez` or `kernel`.
    public var description: String { name.rawValue }
}

/// What only the kernel stack honours: msgpipe sets it through the mgmt socket itself, which bluetoothd's D-Bus
/// API cannot. Reached only through ``PipeBackend/kernel(_:)`` and ``PipeBackend/auto(kernel:)``.
///
/// ```swift
/// var kernel = KernelOptions()
/// kernel.connectionParameters = try ConnectionParameterRequest(
///     interval: "7.5-15", latency: "0", supervisionTimeout: "2000", phy: "2m")
/// kernel.bondDirectory = "/var/lib/msgpipe/bonds"
/// options.backend = .kernel(kernel)
/// ```
public struct KernelOptions: Sendable, Equatable {
    /// The LE connection parameters and PHY to ask for (nil: the system's): a central loads them for each peer
    /// before connecting, a peripheral makes them the adapter's defaults while it runs (the kernel asks each
    /// central for that range). Never ignored: when they cannot be applied (no CAP_NET_ADMIN, an older kernel)
    /// connecting or serving fails with an error that says how to set them. A UNIX socket has no LE connection,
    /// so they do not apply there. The PHY preference is the adapter's and stays after the pipe.
    public var connectionParameters: ConnectionParameterRequest?
    /// Where a peripheral with security medium keeps the keys of bonded centrals, one file per adapter (nil:
    /// none kept; a bond then lasts until the kernel restarts).
    public var bondDirectory: String?

    public init(connectionParameters: ConnectionParameterRequest? = nil, bondDirectory: String? = nil) {
        self.connectionParameters = connectionParameters
        self.bondDirectory = bondDirectory
    }

    /// ``connectionParameters`` when it asks for anything.
    package var requestedConnectionParameters: ConnectionParameterRequest? {
        connectionParameters.flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The backoff between connection attempts, the one policy every backend and the CLI use.
public typealias ReconnectPolicy = ReconnectBackoff
