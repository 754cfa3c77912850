import CSystemd

/// Tells systemd how a service is doing (sd_notify(3)): under a `Type=notify` unit ``ready()`` ends the unit's
/// start and ``stopping()`` says its shutdown began. Without `NOTIFY_SOCKET` in the environment (not started by
/// systemd) both do nothing. Neither blocks, throws nor changes the environment.
///
/// ```swift
/// let server = try await MessagePipe.serve(at: "kiosk")
/// SystemdNotify.ready()        // systemctl start returns now
/// ```
public enum SystemdNotify {
    /// Sends `READY=1`: the service serves.
    public static func ready() { _ = sd_notify(0, "READY=1") }

    /// Sends `STOPPING=1`: the service is shutting down.
    public static func stopping() { _ = sd_notify(0, "STOPPING=1") }
}
