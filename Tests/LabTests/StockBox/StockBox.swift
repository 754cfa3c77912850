import Foundation
import Testing

extension Lab {
    /// The stock box: `dbus-daemon --system` and Debian's bluetoothd (5.66) own the adapters before anything of
    /// ours starts, as on every Raspberry Pi OS, Debian and Ubuntu box. The suite's tests share one bus and
    /// bluetoothd while it stays healthy (`StockBox.run`), and the suite stops them after its last test. hci0 is
    /// "A" (msgpipe's side unless a test says otherwise), hci1 and hci2 the other sides.
    /// `LAB_GATT_CHANNELS=N` runs every bluetoothd with `[GATT] Channels = N`.
    @Suite(.tags(.stockBox, .bluetoothd), .stockBoxDaemons) struct StockBox {
        static let mebibyte = 1 << 20
        static var hasC: Bool { LabEnvironment.current?.addressC != nil }
        static var hasD: Bool { LabEnvironment.current?.addressD != nil }

        /// The adapters bluetoothd powers: hci0, hci1 and, when the lab has it, hci2.
        static var adapters: [Int] { hasC ? [0, 1, 2] : [0, 1] }

        /// Runs `body` as a lab test beside a bus and bluetoothd (`-n`, plus `-d` when `debug`: its log of every
        /// PDU slows transfers several times) with `adapters` powered through D-Bus. They are the ones an earlier
        /// test of the suite left when they are still as a fresh start leaves them (`Shared.take`), else started
        /// anew; afterwards they are kept for the next test only if still so, else stopped (`Shared.giveBack`).
        /// Global advertising is off first: on a stock box it is, and it would hide the advertisements registered
        /// with bluetoothd.
        static func run(debug: Bool = false, _ body: (LabCheck, LabBluetoothd) throws -> Void) {
            LabCheck.run { lab in
                for index in adapters { labShell(["btmgmt", "--index", "\(index)", "advertising", "off"]) }
                let key = Shared.Key(debug: debug)
                let daemons = try Shared.take(key, lab)
                defer { Shared.giveBack(daemons, key, lab) }
                try body(lab, daemons)
            }
        }

        /// bluetoothd's arguments for a bluetoothd a test starts itself (as a shared one's): `-d` when `debug`, and `-f MAIN.CONF` when LAB_GATT_CHANNELS is set.
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
