import Foundation
import Testing

/// A system bus and a bluetoothd a lab test started (`LabCheck.startBluetoothd`).
struct LabBluetoothd {
    let dbus: LabProcess
    let bluetoothd: LabProcess
    /// Seconds from starting dbus-daemon to its listening, and from starting bluetoothd to org.bluez owned on the
    /// bus and to every adapter powered (nil: not within 30 s). For notes, never judged.
    var busSeconds: Double = 0
    var nameSeconds: Double?
    var poweredSeconds: Double?

    /// Stops bluetoothd, then the bus (SIGTERM; bluetoothd killed after 30 s, the bus after 5 s: it lingers
    /// while a service activation bluetoothd asked for times out).
    func stop() {
        bluetoothd.stop()
        dbus.stop(seconds: 5)
    }
}

extension LabCheck {
    /// Starts `dbus-daemon --system` and `bluetoothd -n ARGUMENTS` (Debian's unless `executable` names another),
    /// both in the foreground (a forked daemon would escape the fixture), and powers each of `adapters` through
    /// D-Bus: a failure when the bus does not come up or an adapter is not powered within 30 s. The caller stops
    /// both (`stop()`, usually deferred); the fixture fails the test if either still runs at its end.
    func startBluetoothd(_ executable: String = "/usr/libexec/bluetooth/bluetoothd", arguments: [String], adapters: [Int]) throws -> LabBluetoothd {
        try LabBluetoothd.start(executable, arguments: arguments, adapters: adapters, fail: { self.fail($0) }) { label, path, arguments in
            try self.start(label, path, arguments)
        }
    }
}

extension LabBluetoothd {
    /// `LabCheck.startBluetoothd`, with `start` starting each program (a test's, or a fixture's that outlives
    /// one test) and `fail` taking what went wrong.
    static func start(_ executable: String, arguments: [String], adapters: [Int], fail: (String) -> Void,
                      start: (_ label: String, _ executable: String, _ arguments: [String]) throws -> LabProcess) throws -> LabBluetoothd {
        try FileManager.default.createDirectory(atPath: "/run/dbus", withIntermediateDirectories: true)
        if ((try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)) ?? "").isEmpty {
            labShell(["dbus-uuidgen", "--ensure=/etc/machine-id"])
        }
        // An earlier bus's pid file and socket would keep this one from starting.
        for stale in ["/run/dbus/pid", "/run/dbus/system_bus_socket"] { try? FileManager.default.removeItem(atPath: stale) }
        let began = Date()
        // It prints its pid once it listens.
        let dbus = try start("dbus-daemon", "/usr/bin/dbus-daemon", ["--system", "--nofork", "--print-pid"])
        let listening = Date(timeIntervalSinceNow: 30)
        while dbus.stdout.isEmpty && dbus.isRunning && Date() < listening { Thread.sleep(forTimeInterval: 0.1) }
        if dbus.stdout.isEmpty { fail("dbus-daemon did not start: \(dbus.stderr)") }
        let busSeconds = Date().timeIntervalSince(began)
        let bluetoothd = try start("bluetoothd", executable, ["-n"] + arguments)
        let started = Date()
        var nameSeconds: Double?
        while nameSeconds == nil && bluetoothd.isRunning && Date().timeIntervalSince(started) < 30 {
            if busNameOwned {
                nameSeconds = Date().timeIntervalSince(started)
            } else {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        let unpowered = LabCheck.powerThroughBluetoothd(adapters)
        for index in unpowered {
            fail("bluetoothd did not power hci\(index) within 30 s")
        }
        return LabBluetoothd(dbus: dbus, bluetoothd: bluetoothd, busSeconds: busSeconds, nameSeconds: nameSeconds,
            poweredSeconds: unpowered.isEmpty ? Date().timeIntervalSince(started) : nil)
    }

    /// Whether org.bluez has an owner on the system bus.
    static var busNameOwned: Bool {
        let owner = ["busctl", "--system", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", "s", "org.bluez"]
        return labShell(owner).output.trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
    }
}

extension LabCheck {
    /// Powers each of `adapters` through bluetoothd's D-Bus API, waiting at most `seconds` in all; returns the
    /// ones still not powered then (empty: all are).
    static func powerThroughBluetoothd(_ adapters: [Int], seconds: Double = 30) -> [Int] {
        let powered = Date(timeIntervalSinceNow: seconds)
        return adapters.filter { index in
            let property = ["busctl", "--system", "get-property", "org.bluez", "/org/bluez/hci\(index)", "org.bluez.Adapter1", "Powered"]
            var on = false
            while !on && Date() < powered {
                on = labShell(property).output.trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
                if !on {
                    labShell(["busctl", "--system", "set-property", "org.bluez", "/org/bluez/hci\(index)", "org.bluez.Adapter1", "Powered", "b", "true"])
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
            return !on
        }
    }
}
