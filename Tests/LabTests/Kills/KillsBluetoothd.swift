import Foundation
import Glibc
import Testing

/// Kills 5's bluetoothd (Debian's 5.66, with its own system bus), started again when it dies by itself, as a
/// service manager would: Debian's 5.66 segfaulted here now and then right after a listen that held its acquired
/// sockets was killed mid-transfer (docs/LAB.md, "Kills over Bluetooth"). Each such exit is a line of the test's
/// `kills.log`, and each bluetoothd's output its own `bluetoothd-N.err`.
final class KillsBluetoothd {
    static let executable = "/usr/libexec/bluetooth/bluetoothd"
    private let lab: LabCheck
    private let arguments: [String]
    private let dbus: LabProcess
    private var bluetoothd: LabProcess
    /// How often it died by itself.
    private(set) var exits = 0
    /// hci0 and hci1 were powered through it after its last start.
    private(set) var powered: Bool

    /// Starts the bus and bluetoothd (`LAB_GATT_CHANNELS=N`: with a main.conf of `[GATT] Channels = N`) and
    /// powers hci0 and hci1 (`powered` says whether it did within 30 s).
    init(_ lab: LabCheck) throws {
        self.lab = lab
        var arguments: [String] = []
        if let channels = ProcessInfo.processInfo.environment["LAB_GATT_CHANNELS"], !channels.isEmpty {
            let conf = lab.directory.appendingPathComponent("main.conf")
            try "[GATT]\nChannels = \(channels)\n".write(to: conf, atomically: true, encoding: .utf8)
            arguments = ["-f", conf.path]
        }
        self.arguments = arguments
        let daemons = try lab.startBluetoothd(Self.executable, arguments: arguments, adapters: [0, 1])
        dbus = daemons.dbus
        bluetoothd = daemons.bluetoothd
        powered = LabCheck.powerThroughBluetoothd([0, 1], seconds: 1).isEmpty
    }

    /// When bluetoothd is gone: records its exit, starts it again (after 0.5 s) and powers hci0 and hci1.
    func restartIfDied(_ log: KillsLog) {
        guard !bluetoothd.isRunning else { return }
        let exit = bluetoothd.wait(seconds: 1)
        exits += 1
        log.add("bluetoothd exited (\(exit)) at \(log.elapsed) s: started again")
        Thread.sleep(forTimeInterval: 0.5)
        do {
            bluetoothd = try lab.start("bluetoothd-\(exits)", Self.executable, ["-n"] + arguments)
            powered = LabCheck.powerThroughBluetoothd([0, 1]).isEmpty
        } catch {
            lab.fail("cannot start bluetoothd again: \(error)")
            powered = false
        }
    }

    /// Stops bluetoothd, then the bus.
    func stop() {
        LabBluetoothd(dbus: dbus, bluetoothd: bluetoothd).stop()
    }
}
