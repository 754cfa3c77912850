import Foundation
import Testing

extension Lab.Coc {
    /// `listen --backend bluez` registers the service with the PSM characteristic through bluetoothd's D-Bus API
    /// and opens the kernel channel; gatttool on hci1 reads the PSM, and msgpipe-lab's coc-send moves 1 MiB of
    /// Transport over that channel into listen, byte-identical. Starts its own dbus-daemon and bluetoothd (the
    /// full run leaves it out: the sections after it need bluetoothd gone; LAB_ONLY=coc runs it).
    @Test("beside bluetoothd: listen --backend bluez publishes the PSM through D-Bus; 1 MiB over the channel arrives",
        .tags(.bluetoothd, .hci0, .hci1))
    func besideBluetoothd() {
        LabCheck.run { lab in
            let env = lab.environment
            let daemons = try lab.startBluetoothd(arguments: ["-d"], adapters: [0])
            defer { daemons.stop() }

            let listen = try lab.start("listen", env.msgpipe, [
                "listen", "--backend", "bluez", "--adapter", "hci0", "--name", "msgpipe-cocz", "--verbose"])
            lab.expect(listen.waitForStderr(containing: "advertising"), "listen never advertised")
            let read = try lab.run("gatttool", "/usr/bin/gatttool", [
                "-i", "hci1", "-b", env.addressA, "-t", "public", "--char-read",
                "--uuid=abdd3056-28fa-441d-a470-55a75a52553a"], seconds: 60)
            // "handle: 0x0010 	 value: 85 00" (little-endian): a dynamic LE PSM is 0x0080-0x00ff.
            let value = read.stdout.split(separator: UInt8(ascii: "\n")).lazy.compactMap { line -> [UInt8]? in
                let text = String(decoding: line, as: UTF8.self)
                guard let range = text.range(of: "value: ") else { return nil }
                return text[range.upperBound...].split(separator: " ").compactMap { UInt8($0, radix: 16) }
            }.first
            let psm = value.flatMap { $0.count == 2 ? Int($0[0]) | Int($0[1]) << 8 : nil }
            lab.expect(psm.map { (0x80...0xff).contains($0) } ?? false, "PSM read through bluetoothd: \(psm.map { String($0, radix: 16) } ?? "none")")
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            if let psm {
                let coc = try lab.run("coc-send", env.msgpipeLab, [
                    "lab-probe", "coc-send", "--adapter", "hci1", "--to", env.addressA, "--psm", "\(psm)",
                    "--bytes", "\(Self.mebibyte)"], seconds: 120)
                lab.expectExit(coc)
            }
            Thread.sleep(forTimeInterval: 1)
            listen.stop()
            // coc-send's message: byte (i * 131 + 7) mod 256 at offset i.
            let sent = (0..<Self.mebibyte).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
            lab.expect(listen.stdout == sent, "listen wrote \(listen.stdout.count) bytes, not coc-send's 1 MiB")
            lab.expect(listen.stderr.contains("backend: bluez"), "listen --verbose never named the bluez backend")
            lab.expect(listen.stderr.contains("beside GATT"), "listen --verbose never opened its channel beside GATT")
            daemons.bluetoothd.stop()
            _ = lab.waitForNoLinks(seconds: 20, endingThem: false)
        }
    }
}
