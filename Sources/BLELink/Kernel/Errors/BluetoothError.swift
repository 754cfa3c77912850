/// Why a call into the Linux Bluetooth stack (L2CAP sockets, the management interface) failed, or why bytes
/// from it could not be decoded. Each `description` names the remedy; settings are named as the library
/// names them ("connect by its address"), and a CLI names its own options for them.
public enum BluetoothError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `socket(AF_BLUETOOTH)` failed with EAFNOSUPPORT: the running kernel has no Bluetooth.
    case kernelWithoutBluetooth
    /// No controller matches the selector (`hciN` or an address), or the machine has none.
    case noAdapter(selector: String)
    /// The controller exists but is powered off.
    case adapterDown(adapter: String)
    /// The controller cannot do Low Energy, or LE is switched off.
    case lowEnergyDisabled(adapter: String)
    /// The kernel refused the operation for lack of privileges (EPERM/EACCES or mgmt "Permission Denied").
    case permissionDenied(operation: String)
    /// The kernel refused to set the LE connection parameters or PHY that were asked for, for lack of
    /// CAP_NET_ADMIN; the request is not dropped silently.
    case connectionParametersNeedCapability(operation: String)
    /// The ATT fixed channel of this adapter is already bound by another process (EADDRINUSE).
    case attChannelInUse(adapter: String)
    /// An LE connection did not complete within the timeout.
    case connectTimedOut(peer: String, timeout: Duration)
    /// A scan for a peer advertising the given name or service found nothing.
    case peerNotFound(query: String, timeout: Duration)
    /// A management command was answered with a non-success status.
    case commandFailed(command: String, status: ManagementStatus)
    /// The management interface did not answer a command in time.
    case commandTimedOut(command: String)
    /// Advertising could not be started, even after retries.
    case advertisingFailed(attempts: Int, lastError: String)
    /// A system call failed with `errno`.
    case system(call: String, errno: Int32, message: String)
    /// A management packet from the kernel was shorter than or inconsistent with its declared layout.
    case malformedManagementPacket(String)
    /// Advertising / EIR data did not parse (a length running past the end, an odd UUID list, ...).
    case malformedAdvertisingData(String)
    /// The kernel or the controller cannot do `operation` (an older management interface, a controller
    /// without the feature); `remedy` says what would.
    case notSupported(operation: String, remedy: String)
    /// A user-supplied value (address, UUID, adapter name, security level) is not valid.
    case invalidArgument(String)
    /// The bond store could not be read or written (a corrupt file is left untouched).
    case bondStore(BondStoreError)

    public var description: String {
        switch self {
        case .kernelWithoutBluetooth:
            "this kernel has no Bluetooth support (socket(AF_BLUETOOTH) failed with EAFNOSUPPORT); "
                + "load the bluetooth module (sudo modprobe bluetooth), or run on a kernel built with Bluetooth (a container or VM often has none)"
        case let .noAdapter(selector):
            "no Bluetooth adapter \(selector.isEmpty ? "found" : "matches '\(selector)'"); "
                + "list adapters with 'btmgmt info' or 'hciconfig -a', and check the controller is attached"
        case let .adapterDown(adapter):
            "Bluetooth adapter \(adapter) is powered off; power it on with 'btmgmt --index \(adapter.dropFirst(3)) power on'"
        case let .lowEnergyDisabled(adapter):
            "Bluetooth adapter \(adapter) has Low Energy switched off or unsupported; "
                + "enable it with 'btmgmt --index \(adapter.dropFirst(3)) le on'"
        case let .permissionDenied(operation):
            "permission denied for \(operation): run as root or grant CAP_NET_ADMIN and CAP_NET_RAW "
                + "(e.g. 'setcap cap_net_admin,cap_net_raw+eip $(command -v msgpipe)')"
        case let .connectionParametersNeedCapability(operation):
            "the connection parameters asked for cannot be set: the kernel refused \(operation) without CAP_NET_ADMIN; "
                + "grant it ('sudo setcap cap_net_admin+ep $(command -v msgpipe)'), or run msgpipe under its packaged "
                + "systemd unit with AmbientCapabilities=CAP_NET_ADMIN (examples/kernel-backend.conf), "
                + "or leave the connection parameters to the system"
        case let .attChannelInUse(adapter):
            "the ATT channel of \(adapter) is already in use by another process (probably bluetoothd); "
                + "stop bluetoothd ('systemctl stop bluetooth') or the other ATT server, then retry"
        case let .connectTimedOut(peer, timeout):
            "LE connection to \(peer) did not complete within \(timeout.secondsText); check that the peer is advertising "
                + "connectable and in range, and that this adapter is not advertising itself"
        case let .peerNotFound(query, timeout):
            "no peer advertising \(query) was found within \(timeout.secondsText); check that it is advertising "
                + "(a scan lists it) or connect by its address"
        case let .commandFailed(command, status):
            "Bluetooth management command \(command) failed: \(status)"
        case let .commandTimedOut(command):
            "Bluetooth management command \(command) got no answer from the kernel"
        case let .advertisingFailed(attempts, lastError):
            "advertising could not be started after \(attempts) attempts: \(lastError)"
        case let .system(call, errno, message):
            "\(call) failed: \(message) (errno \(errno))"
        case let .malformedManagementPacket(reason):
            "malformed Bluetooth management packet: \(reason)"
        case let .malformedAdvertisingData(reason):
            "malformed advertising data: \(reason)"
        case let .notSupported(operation, remedy):
            "\(operation) is not supported here: \(remedy)"
        case let .invalidArgument(reason):
            reason
        case let .bondStore(error):
            error.description
        }
    }
}

extension BluetoothError: TransientError {
    /// True for failures that another attempt may fix (timeouts, a peer not yet advertising, a busy link);
    /// false for configuration errors that only the user can fix.
    public var isTransient: Bool {
        switch self {
        case .connectTimedOut, .peerNotFound, .commandTimedOut, .system: true
        case let .commandFailed(_, status): status == .busy
        default: false
        }
    }
}
