import Foundation
import Testing

extension Lab.StockBox {
    /// The bus and bluetoothd the stock-box tests share. Starting them costs 5-15 s in the TCG guest (bluetoothd
    /// sets up every adapter over mgmt, and the bus lingers 5 s as it stops), more than many tests take, so a
    /// test takes the ones the previous test gave back when they are still as a fresh start leaves them:
    /// started with the same arguments, both running, org.bluez owned, every adapter powered, no advertisement
    /// registered with bluetoothd or in a controller, no discovery. Device objects an earlier test's scans or links left are
    /// removed first (Adapter1.RemoveDevice; a fresh bluetoothd would only have those it loads from
    /// /var/lib/bluetooth). Anything else starts a fresh pair. Tests of `Lab` run one at a time.
    enum Shared {
        /// What the bus and bluetoothd were started with: reused only for the same.
        struct Key: Equatable {
            let debug: Bool
            /// LAB_GATT_CHANNELS, when set.
            let channels: String?

            init(debug: Bool) {
                self.debug = debug
                let channels = ProcessInfo.processInfo.environment["LAB_GATT_CHANNELS"]
                self.channels = channels?.isEmpty == false ? channels : nil
            }
        }

        private struct Held {
            let key: Key
            let daemons: LabBluetoothd
        }

        /// The pair given back by the last test, if kept.
        nonisolated(unsafe) private static var held: Held?
        /// How many pairs this process started (each logs to its own directory).
        nonisolated(unsafe) private static var started = 0

        /// A bus and bluetoothd for a test: the held pair when it is healthy (a note says which log directory
        /// it logs to), else a fresh one (the held pair stopped first). Start-up failures are the test's.
        static func take(_ key: Key, _ lab: LabCheck) throws -> LabBluetoothd {
            if let kept = held {
                held = nil
                if kept.key == key, let why = unhealthy(kept.daemons) {
                    lab.note("stock box: the bus and bluetoothd the last test left are not reused (\(why)): started anew")
                    stop(kept.daemons, lab)
                } else if kept.key == key {
                    removeDevices()
                    lab.note("stock box: reusing the bus and bluetoothd of \(kept.daemons.bluetoothd.stderrFile.deletingLastPathComponent().lastPathComponent)")
                    return kept.daemons
                } else {
                    stop(kept.daemons, lab)
                }
            }
            started += 1
            let directory = lab.environment.outDirectory.appendingPathComponent("labtests/stockboxDaemons\(started)")
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var arguments = key.debug ? ["-d"] : []
            if let channels = key.channels {
                let conf = directory.appendingPathComponent("main.conf")
                try Data("[GATT]\nChannels = \(channels)\n".utf8).write(to: conf)
                arguments += ["-f", conf.path]
            }
            return try LabBluetoothd.start("/usr/libexec/bluetooth/bluetoothd", arguments: arguments, adapters: adapters,
                fail: { lab.fail($0) }) { label, executable, arguments in
                try LabProcess(label: label, executable: executable, arguments: arguments, directory: directory)
            }
        }

        /// Takes the pair back after a test: kept for the next test when healthy once the test's links are gone,
        /// else stopped (advertising instances bluetoothd leaves in a controller as it stops are then removed,
        /// with a note: 5.66 registers one again as a client's last central leaves and does not always remove
        /// it as it exits).
        static func giveBack(_ daemons: LabBluetoothd, _ key: Key, _ lab: LabCheck) {
            _ = lab.waitForNoLinks(seconds: 20, endingThem: false)
            if let why = unhealthy(daemons) {
                if daemons.bluetoothd.isRunning { lab.note("stock box: bus and bluetoothd stopped after the test (\(why))") }
                stop(daemons, lab)
            } else {
                held = Held(key: key, daemons: daemons)
            }
        }

        /// Stops the held pair, if any (the suite's end).
        static func stopHeld() {
            guard let kept = held else { return }
            held = nil
            kept.daemons.stop()
            LabControllers.removeAdvertising()
        }

        private static func stop(_ daemons: LabBluetoothd, _ lab: LabCheck) {
            daemons.stop()
            let left = LabControllers.advertising().filter { $0.value.instances > 0 }.mapValues(\.instances)
            if !left.isEmpty {
                lab.note("advertising instances bluetoothd left behind as it stopped (controller: count): \(left); removed")
                LabControllers.removeAdvertising()
            }
        }

        /// Why the pair is not as a fresh start leaves it (nil: it is). Reads bluetoothd's objects in one
        /// GetManagedObjects call: a busctl per property cost seconds a test in the TCG guest.
        static func unhealthy(_ daemons: LabBluetoothd) -> String? {
            guard daemons.dbus.isRunning else { return "the bus is gone" }
            guard daemons.bluetoothd.isRunning else { return "bluetoothd is gone" }
            guard let objects = bluezObjects() else { return "org.bluez has no owner or its objects are unreadable" }
            for index in adapters {
                let adapter = objects["/org/bluez/hci\(index)"] ?? [:]
                let powered = adapter["org.bluez.Adapter1"]?["Powered"] as? Bool
                guard powered == true else { return "hci\(index) is not powered" }
                let active = adapter["org.bluez.LEAdvertisingManager1"]?["ActiveInstances"] as? Int
                guard active == 0 else { return "hci\(index) has advertisements registered with bluetoothd (\(active.map(String.init) ?? "unknown"))" }
                guard adapter["org.bluez.Adapter1"]?["Discovering"] as? Bool == false else { return "hci\(index) is discovering" }
            }
            let instances = LabControllers.advertising().filter { $0.value.instances > 0 }.mapValues(\.instances)
            guard instances.isEmpty else { return "advertising instances in the controllers (controller: count): \(instances)" }
            return nil
        }

        /// org.bluez's objects (path: interface: property: value, the variants unwrapped) from one
        /// `busctl --json=short call ... GetManagedObjects`; nil when bluetoothd did not answer.
        static func bluezObjects() -> [String: [String: [String: Any]]]? {
            let answer = labShell(["busctl", "--system", "--json=short", "call", "org.bluez", "/",
                                   "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"])
            guard answer.status == 0,
                  let json = try? JSONSerialization.jsonObject(with: Data(answer.output.utf8)) as? [String: Any],
                  let objects = (json["data"] as? [Any])?.first as? [String: [String: [String: Any]]]
            else { return nil }
            return objects.mapValues { interfaces in
                interfaces.mapValues { properties in properties.mapValues { ($0 as? [String: Any])?["data"] ?? $0 } }
            }
        }

        /// Removes every device object of the shared adapters (Adapter1.RemoveDevice, its bond too).
        private static func removeDevices() {
            let paths = bluezObjects().map { Array($0.keys) } ?? []
            for index in adapters {
                let adapter = "/org/bluez/hci\(index)"
                for device in paths where device.hasPrefix(adapter + "/dev_") && !device.dropFirst(adapter.count + 1).contains("/") {
                    labShell(["busctl", "--system", "call", "org.bluez", adapter, "org.bluez.Adapter1", "RemoveDevice", "o", device])
                }
            }
        }
    }
}

/// The stock-box suite's scope: the bus and bluetoothd its tests shared are stopped after its last test, so the
/// next suite starts with neither.
struct StockBoxDaemonsTrait: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        defer { Lab.StockBox.Shared.stopHeld() }
        try await function()
    }
}

extension Trait where Self == StockBoxDaemonsTrait {
    /// Stops the stock box's shared bus and bluetoothd at the suite's end.
    static var stockBoxDaemons: Self { Self() }
}
