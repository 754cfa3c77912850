import Foundation
import Glibc
import Testing

extension Lab {
    /// A stock box with a newer bluetoothd: Debian 13's BlueZ (built by Scripts/blelab.sh into
    /// BLELAB_DIR/bluez-new) beside Debian 12's 5.66. hci0 listens through it (`--backend bluez`), hci1 and hci2
    /// are the centrals. bluetoothd runs without -d: its debug log of every PDU slows each transfer several times.
    @Suite(.tags(.newerBluetoothd, .bluetoothd, .hci0, .hci1, .hci2),
        .enabled(if: NewerBluetoothd.path != nil && LabEnvironment.current?.addressC != nil,
            "needs BLELAB_DIR/bluez-new/bluetoothd (Scripts/blelab.sh builds it) and a third controller"))
    struct NewBluez {
        static let mebibyte = 1 << 20

        /// Runs `body` as a lab test beside the newer bluetoothd (its own bus, hci0-hci2 powered) with `msgpipe
        /// listen --backend bluez --json` on hci0 advertising "msgpipe-new"; afterwards listen is stopped (SIGTERM,
        /// exit 0 expected) and its messages handed to `verdict`.
        static func run(_ body: (LabCheck, LabProcess) throws -> Void, verdict: (LabCheck, [ListenLine]) -> Void) {
            LabCheck.run { lab in
                let daemons = try lab.startBluetoothd(NewerBluetoothd.path ?? "", arguments: [], adapters: [0, 1, 2])
                defer { daemons.stop() }
                let listen = try lab.start("listen", lab.environment.msgpipe, [
                    "listen", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-new", "--json", "--verbose"])
                lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
                try body(lab, listen)
                Thread.sleep(forTimeInterval: 1)
                listen.stop()
                lab.expectExit(listen)
                verdict(lab, listen.jsonLines(ListenLine.self))
            }
        }

        /// msgpipe send through bluetoothd from `adapter` to listen, `--json --verbose`.
        static func send(_ lab: LabCheck, _ label: String, adapter: String, _ file: URL, stopAfterBytes: Int? = nil) throws -> LabProcess {
            let executable = stopAfterBytes == nil ? lab.environment.msgpipe : lab.environment.msgpipeLab
            return try lab.start(label, executable, [
                "send", "--backend", "bluez", "--adapter", adapter, "--to", "msgpipe-new", "--json", "--verbose"]
                + (stopAfterBytes.map { ["--stop-after-bytes", "\($0)"] } ?? []) + [file.path])
        }
    }
}

/// The newer bluetoothd, when the lab built it.
enum NewerBluetoothd {
    static let path: String? = {
        let path = (ProcessInfo.processInfo.environment["BLELAB_DIR"] ?? "/tmp/blelab") + "/bluez-new/bluetoothd"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()
}

extension LabCheck {
    /// Each of `messages` is among `lines` exactly once, with its CRC-32.
    func expectEachOnce(_ messages: [(name: String, bytes: [UInt8])], in lines: [ListenLine], sourceLocation: SourceLocation = #_sourceLocation) {
        for message in messages {
            let found = lines.filter { $0.body == message.bytes }
            expect(found.count == 1, "\(message.name) arrived \(found.count) times, expected once (\(lines.count) messages in all)", sourceLocation: sourceLocation)
            expect(found.allSatisfy { $0.crc32 == crc32Hex(message.bytes) }, "\(message.name): a wrong CRC-32", sourceLocation: sourceLocation)
        }
        expect(lines.count == messages.count, "listen got \(lines.count) messages, expected \(messages.count)", sourceLocation: sourceLocation)
    }
}
