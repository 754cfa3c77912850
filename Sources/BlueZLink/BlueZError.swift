import BluetoothCore
public import SDBus

/// Why the BlueZ D-Bus backend failed, each with its remedy. The texts name settings as the library does ("the
/// kernel backend", "the adapter", "the profile"); a CLI names its own options for them.
public enum BlueZError: Error, Sendable, Equatable, CustomStringConvertible {
    /// org.bluez is not on the bus.
    case notRunning
    /// No adapter of that name (e.g. "hci0") under /org/bluez.
    case adapterNotFound(String)
    /// The adapter exists but is powered off.
    case adapterPoweredOff(String)
    /// The bus's policy refused the call.
    case accessDenied(String)
    /// bluetoothd does not know the method: too old for it.
    case tooOld(String)
    /// Any other D-Bus failure.
    case dbus(DBusError)
    /// bluetoothd refused `what` as already in progress (e.g. a second discovery on one D-Bus connection).
    case inProgress(String)
    /// Discovery did not see the target (a name or an address) within the time given.
    case deviceNotFound(String, timeout: Duration)
    /// `Device1.Connect` kept failing (the last error after every attempt).
    case connectFailed(device: String, attempts: Int, reason: String)
    /// The device connected but `ServicesResolved` did not turn true in time.
    case servicesNotResolved(device: String, timeout: Duration)
    /// The connected device has no primary service with this UUID.
    case serviceNotFound(uuid: String, device: String)
    /// The peer's service lacks a characteristic with this UUID, or it lacks the properties we need.
    case characteristicNotFound(uuid: String, service: String)
    /// The device disconnected while we set the connection up.
    case disconnected(device: String)
    /// Several centrals at once were asked of a bluetoothd that hands them all one socket (before 5.76;
    /// `version` is nil when it could not be told).
    case severalCentralsUnsupported(version: BlueZVersion?, centrals: Int)

    /// The BlueZ error for a D-Bus failure of a call to org.bluez (`what` names the call, for the message).
    public init(_ error: DBusError, calling what: String) {
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            self = .notRunning
        case let name? where name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
            // The bus tried to start bluetoothd through its activation file (dbus-org.bluez.service) and
            // could not (e.g. Spawn.ChildExited while bluetoothd is stopped).
            self = .notRunning
        case "org.freedesktop.DBus.Error.AccessDenied", "org.bluez.Error.NotPermitted":
            self = .accessDenied(what)
        case "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface":
            self = .tooOld(what)
        default:
            self = .dbus(error)
        }
    }

    public var description: String {
        switch self {
        case .notRunning:
            "bluetoothd is not running (org.bluez is not on the system D-Bus): start it (sudo systemctl start bluetooth), or use the kernel backend with bluetoothd stopped"
        case let .adapterNotFound(name):
            "no Bluetooth adapter \(name) known to bluetoothd: check `bluetoothctl list` and the adapter asked for"
        case let .adapterPoweredOff(name):
            "the adapter \(name) is powered off: `bluetoothctl power on` (and `rfkill unblock bluetooth` if it is blocked)"
        case let .accessDenied(what):
            "the D-Bus policy denies \(what) to this user: add the user to the group BlueZ's policy allows (/usr/share/dbus-1/system.d/bluetooth.conf, usually `bluetooth`) or run as root"
        case let .tooOld(what):
            "bluetoothd is too old for \(what): BlueZ 5.48 or later is needed (acquired descriptors)"
        case let .dbus(error):
            "BlueZ over D-Bus: \(error)"
        case let .inProgress(what):
            "bluetoothd says \(what) is already in progress for this client: one discovery or connect at a time per D-Bus connection"
        case let .deviceNotFound(target, timeout):
            "no device \(target) seen by bluetoothd's discovery within \(timeout.secondsText): is it advertising and in range?"
        case let .connectFailed(device, attempts, reason):
            "connecting \(device) failed \(attempts) times (last: \(reason)): move closer, or retry when the radio is less busy"
        case let .servicesNotResolved(device, timeout):
            "\(device) connected but bluetoothd did not resolve its GATT services within \(timeout.secondsText) (ServicesResolved stayed false)"
        case let .serviceNotFound(uuid, device):
            "\(device) has no GATT service \(uuid): check the profile (its service UUID)"
        case let .characteristicNotFound(uuid, service):
            "the GATT service \(service) has no usable characteristic \(uuid) (missing, or without write / notify): check the profile (its characteristic UUIDs)"
        case let .disconnected(device):
            "\(device) disconnected while the connection was being set up"
        case let .severalCentralsUnsupported(version, centrals):
            "bluetoothd \(version.map { "\($0)" } ?? "(version unknown)") hands every central the same acquired socket (BlueZ before 5.76), so msgpipe serves one central at a time through it and cannot serve \(centrals) at once: upgrade BlueZ to 5.76 or later, or stop bluetoothd and use the kernel backend"
        }
    }
}
