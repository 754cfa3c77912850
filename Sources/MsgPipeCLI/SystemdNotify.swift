import CSystemd
import Glibc

/// The service manager's readiness protocol: under a `Type=notify` unit `READY=1` tells systemd the command
/// serves; elsewhere (no `NOTIFY_SOCKET`) it does nothing.
enum SystemdNotify {
    static func ready() { _ = sd_notify(0, "READY=1") }
    static func stopping() { _ = sd_notify(0, "STOPPING=1") }
}

/// This machine's host name (the default gateway id); "msgpipe" if it cannot be read.
func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "msgpipe" }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "msgpipe" : name
}
