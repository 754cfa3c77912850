import Foundation
import Testing

extension Lab.StockBox {
    /// Check 21: the bus and bluetoothd come up, `bluetoothctl list` shows hci0 and hci1 through bluetoothd, and
    /// every adapter is powered through D-Bus. The note gives the start-up times.
    @Test("stock box: dbus-daemon and bluetoothd up, bluetoothctl lists hci0 and hci1, all powered", .tags(.hci0, .hci1))
    func stockBoxUp() {
        Self.run(debug: true) { lab, daemons in
            let env = lab.environment
            func seconds(_ value: Double?) -> String { value.map { String(format: "%.2f s", $0) } ?? "never" }
            lab.note("stock box: dbus-daemon up in \(seconds(daemons.busSeconds)); org.bluez on the bus \(seconds(daemons.nameSeconds)) after bluetoothd started; "
                + "\(Self.adapters.map { "hci\($0)" }.joined(separator: " ")) powered \(seconds(daemons.poweredSeconds)) after")
            lab.expect(daemons.nameSeconds != nil, "org.bluez had no owner on the bus within 30 s")
            lab.expect(daemons.poweredSeconds != nil, "not every adapter was powered within 30 s")
            let list = try lab.run("bluetoothctl-list", "/usr/bin/env", ["bluetoothctl", "list"], seconds: 30)
            let controllers = Self.plain(list.stdoutText).split(separator: "\n").filter { $0.hasPrefix("Controller ") }
            for address in [env.addressA, env.addressB] {
                lab.expect(controllers.contains { $0.hasPrefix("Controller \(address)") },
                    "bluetoothctl list shows no Controller \(address): \(controllers)")
            }
            lab.note("stock box: bluetoothd \(labShell(["/usr/libexec/bluetooth/bluetoothd", "--version"]).output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// Check 21b: BlueZ's own client end to end. bluetoothctl on hci0 registers an advertisement
    /// (LEAdvertisingManager1, name msgpipe-ctl, discoverable: bluetoothd's discovery without a filter ignores
    /// LE advertisers without the General Discoverable flag); bluetoothctl on hci1 `scan on` finds it.
    @Test("stock box: bluetoothctl on hci1 scans and finds the advertisement bluetoothctl registered on hci0", .tags(.hci0, .hci1))
    func bluetoothctlAdvertises() {
        Self.run { lab, _ in
            let env = lab.environment
            let advertiser = try lab.start("bluetoothctl-adv", "/usr/bin/env", ["bluetoothctl"], interactive: true)
            // Reading a pipe, bluetoothctl may list no controller: a bounded wait, as the bash check's, not a verdict.
            _ = Self.waitForOutput(advertiser, seconds: 10) { $0.contains("Controller \(env.addressA)") }
            for command in ["select \(env.addressA)", "menu advertise", "name msgpipe-ctl", "discoverable on", "back", "advertise on"] {
                advertiser.type(command)
            }
            let registered = Self.waitForOutput(advertiser, seconds: 60) {
                $0.contains("Advertising object registered") || $0.contains("Failed to register")
            }
            lab.expect(registered && Self.plain(advertiser.stdoutText).contains("Advertising object registered"),
                "bluetoothctl did not register its advertisement on hci0")

            let scanner = try lab.start("bluetoothctl-scan", "/usr/bin/env", ["bluetoothctl"], interactive: true)
            _ = Self.waitForOutput(scanner, seconds: 10) { $0.contains("Controller \(env.addressB)") }
            scanner.type("select \(env.addressB)")
            scanner.type("scan on")
            let found = Self.waitForOutput(scanner, seconds: 40) { text in
                text.split(separator: "\n").contains { $0.contains("Device \(env.addressA)") && $0.contains("msgpipe-ctl") }
            }
            lab.expect(found, "bluetoothctl on hci1 never showed Device \(env.addressA) named msgpipe-ctl")
            scanner.type("scan off")
            scanner.type("devices")
            Thread.sleep(forTimeInterval: 0.5)
            scanner.type("quit")
            scanner.wait(seconds: 30)
            advertiser.type("advertise off")
            Thread.sleep(forTimeInterval: 0.5)
            advertiser.type("quit")
            advertiser.wait(seconds: 30)
        }
    }

    /// bluetoothctl's output without its colour escapes and readline's prompt markers.
    static func plain(_ text: String) -> String {
        var out = ""
        var escape = false
        for scalar in text.unicodeScalars {
            if escape {
                if scalar.properties.isAlphabetic { escape = false }
            } else if scalar == "\u{1B}" {
                escape = true
            } else if scalar != "\u{01}" && scalar != "\u{02}" && scalar != "\r" {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Waits until `condition` holds for the process's output without escapes (true), or `seconds` passed or
    /// the process ended (false).
    static func waitForOutput(_ process: LabProcess, seconds: Double, _ condition: (String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition(plain(process.stdoutText)) { return true }
            if !process.isRunning { return condition(plain(process.stdoutText)) }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }
}
