import Foundation
import Testing

extension Lab {
    /// The stock box: `dbus-daemon --system` and Debian's bluetoothd (5.66) own the adapters before anything of
    /// ours starts, as on every Raspberry Pi OS, Debian and Ubuntu box. Each test starts its own bus and
    /// bluetoothd (`StockBox.run`) and stops them. hci0 is "A" (msgpipe's side unless a test says otherwise),
    /// hci1 and hci2 the other sides. `LAB_GATT_CHANNELS=N` runs every bluetoothd with `[GATT] Channels = N`.
    @Suite(.tags(.stockBox, .bluetoothd)) struct StockBox {
        static let mebibyte = 1 << 20
        static var hasC: Bool { LabEnvironment.current?.addressC != nil }
        static var hasD: Bool { LabEnvironment.current?.addressD != nil }

        /// The adapters bluetoothd powers: hci0, hci1 and, when the lab has it, hci2.
        static var adapters: [Int] { hasC ? [0, 1, 2] : [0, 1] }

        /// Runs `body` as a lab test beside a fresh bus and bluetoothd (`-n`, plus `-d` when `debug`: its log of
        /// every PDU slows transfers several times) with `adapters` powered through D-Bus; both are stopped
        /// afterwards, also when `body` throws. Global advertising is off first: on a stock box it is, and it
        /// would hide the advertisements registered with bluetoothd. Instances bluetoothd leaves as it stops are removed, with a note.
        static func run(debug: Bool = false, _ body: (LabCheck, LabBluetoothd) throws -> Void) {
            LabCheck.run { lab in
                for index in adapters { labShell(["btmgmt", "--index", "\(index)", "advertising", "off"]) }
                let daemons = try lab.startBluetoothd(arguments: bluetoothdArguments(lab, debug: debug), adapters: adapters)
                defer {
                    daemons.stop()
                    // An instance still in a controller once bluetoothd is gone is bluetoothd's: 5.66 registers
                    // one again as a client's last central leaves and does not always remove it as it exits.
                    let left = LabControllers.advertising().filter { $0.value.instances > 0 }.mapValues(\.instances)
                    if !left.isEmpty {
                        lab.note("advertising instances bluetoothd left behind as it stopped (controller: count): \(left); removed")
                        LabControllers.removeAdvertising()
                    }
                }
                try body(lab, daemons)
            }
        }

        /// bluetoothd's arguments for this run: `-d` when `debug`, and `-f MAIN.CONF` when LAB_GATT_CHANNELS is set.
        static func bluetoothdArguments(_ lab: LabCheck, debug: Bool) throws -> [String] {
            var arguments = debug ? ["-d"] : []
            if let channels = ProcessInfo.processInfo.environment["LAB_GATT_CHANNELS"], !channels.isEmpty {
                let conf = try lab.file("main.conf", Array("[GATT]\nChannels = \(channels)\n".utf8))
                arguments += ["-f", conf.path]
            }
            return arguments
        }
    }
}
