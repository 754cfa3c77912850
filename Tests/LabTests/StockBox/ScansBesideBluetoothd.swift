import Foundation
import Testing

extension Lab.StockBox {
    /// Check 24: `listen --backend bluez` advertises on hci0; hci1's bluetoothd already has hci0 as a device (a
    /// first scan made it, as a phone the box met before); `scan --backend bluez --adapter hci1 --name --json`
    /// lists it with its address and name.
    @Test("stock box: msgpipe scan --backend bluez on hci1 lists hci0's listen (a device hci1 knew)", .tags(.hci0, .hci1))
    func scanFindsKnownListen() {
        Self.run { lab, _ in
            let env = lab.environment
            let listen = try Self.startListen(lab, name: "msgpipe-sb")
            let first = try lab.run("scan-first", env.msgpipe, [
                "scan", "--backend", "bluez", "--adapter", "hci1", "--name", "msgpipe-sb", "--timeout", "10", "--json"], seconds: 60)
            lab.expectExit(first)
            let device = "/org/bluez/hci1/dev_" + env.addressA.replacingOccurrences(of: ":", with: "_")
            let known = labShell(["busctl", "--system", "get-property", "org.bluez", device, "org.bluez.Device1", "Address"])
            lab.expect(known.status == 0, "hci1's bluetoothd has no device \(device) after the first scan: \(known.output)")
            let scan = try lab.run("scan", env.msgpipe, [
                "scan", "--backend", "bluez", "--adapter", "hci1", "--name", "msgpipe-sb", "--timeout", "10", "--json"], seconds: 60)
            lab.expectExit(scan)
            let peers = scan.jsonLines([ScannedPeerLine].self).flatMap { $0 }
            let found = peers.first { $0.address == env.addressA }
            lab.expect(found != nil, "scan --json lists no peer at \(env.addressA) (\(peers.count) peers)")
            lab.expect(found?.name == "msgpipe-sb", "scan: name \(found?.name ?? "null"), expected msgpipe-sb")
            listen.stop()
            lab.expectExit(listen)
        }
    }

    /// Check 24b: bluetoothctl's `scan on` on hci1 holds a discovery session of its own; `msgpipe scan` runs
    /// through bluetoothd, then on the kernel backend (mgmt); after each, hci1's Adapter1.Discovering is true
    /// again within 15 s (bluetoothd restarts the remaining session's discovery after its idle time: the wait is
    /// a note).
    @Test("stock box: msgpipe scan (through bluetoothd, then on the kernel backend) beside bluetoothctl's scan on hci1 leaves hci1 discovering",
        .tags(.hci1))
    func scanBesideBluetoothctl() {
        Self.run { lab, _ in
            let env = lab.environment
            let ctl = try lab.start("bluetoothctl-scan", "/usr/bin/env", ["bluetoothctl"], interactive: true)
            _ = Self.waitForOutput(ctl, seconds: 10) { $0.contains("Controller \(env.addressB)") }
            ctl.type("select \(env.addressB)")
            ctl.type("scan on")
            lab.expect(Self.waitForOutput(ctl, seconds: 60) { $0.contains("Discovering: yes") }, "bluetoothctl's scan never started")
            lab.expect(Self.discovering() == "b true", "hci1 not discovering under bluetoothctl's scan: \(Self.discovering())")
            for backend in ["bluez", "kernel"] {
                let scan = try lab.run("scan-\(backend)", env.msgpipe, ["scan", "--backend", backend, "--adapter", "hci1", "--timeout", "4"], seconds: 30)
                // Its exit is not the verdict (without --name it exits 1 when nothing answered); hci1's state is.
                lab.note("stock box: msgpipe scan --backend \(backend) \(scan.exit.map { "\($0)" } ?? "?")")
                let ended = Date()
                var state = Self.discovering()
                while state != "b true" && Date().timeIntervalSince(ended) < 15 {
                    Thread.sleep(forTimeInterval: 0.25)
                    state = Self.discovering()
                }
                lab.note("stock box: discovering after \(backend): \(state) (waited \(Int(Date().timeIntervalSince(ended))) s)")
                lab.expect(state == "b true", "hci1 not discovering 15 s after msgpipe scan --backend \(backend): \(state)")
            }
            ctl.type("scan off")
            Thread.sleep(forTimeInterval: 0.5)
            ctl.type("quit")
            ctl.wait(seconds: 20)
        }
    }

    /// hci1's Adapter1.Discovering as busctl prints it ("b true"), or busctl's error.
    static func discovering() -> String {
        labShell(["busctl", "--system", "get-property", "org.bluez", "/org/bluez/hci1", "org.bluez.Adapter1", "Discovering"])
            .output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `msgpipe listen --backend bluez --adapter hci0 --name NAME --json --verbose` (plus `arguments`), once it
    /// advertises (a failure if it never does within 60 s).
    static func startListen(_ lab: LabCheck, name: String, _ arguments: [String] = []) throws -> LabProcess {
        let listen = try lab.start("listen", lab.environment.msgpipe, [
            "listen", "--backend", "bluez", "--adapter", "hci0", "--name", name, "--json", "--verbose"] + arguments)
        lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
        return listen
    }
}
