import Foundation
import Testing

extension Lab.StockBox {
    /// The three messages of check 29: 10 B, 1 KiB and 100 KiB.
    static let nusSizes = [10, 1024, 102_400]

    /// Check 29 (lines): `send --backend bluez --adapter hci1 --to nus-lines --profile nus --format lines` sends the
    /// three messages in one send into Tests/lab/nus_peripheral.py, a Nordic UART Service registered with
    /// bluetoothd on hci0 through dbus-fast, as Linux peripherals are made: what bluetoothd handed its WriteValue is
    /// each message and a newline, in order.
    @Test("stock box: send --profile nus --format lines into a Python NUS peripheral: 10 B, 1 KiB, 100 KiB whole, exit 0",
        .tags(.hci0, .hci1))
    func nusLinesFormat() {
        Self.run(unless: Self.bleakMissing()) { lab, _ in
            let messages = Self.nusSizes.map(Self.randomText)
            let peripheral = try Self.startNUS(lab, "lines")
            let send = try Self.sendNUS(lab, "lines", messages, label: "send")
            peripheral.stop()
            lab.expectExit(send)
            let written = (try? Data(contentsOf: lab.directory.appendingPathComponent("nus_lines.bin"))).map { [UInt8]($0) } ?? []
            let wanted: [UInt8] = messages.flatMap { $0 + [UInt8(ascii: "\n")] }
            lab.expect(written == wanted, "the peripheral was written \(written.count) bytes, not the three messages and a newline each (\(wanted.count) bytes)")
        }
    }

    /// Check 29 (legacy): one `send --format legacy` per message (the seeds' Start/End values) into the NUS
    /// peripheral; Tests/lab/legacy_decode.py reassembles each send's values from the peripheral's log: one whole
    /// message, the one sent.
    @Test("stock box: send --profile nus --format legacy into a Python NUS peripheral: 10 B, 1 KiB, 100 KiB whole, exit 0",
        .tags(.hci0, .hci1))
    func nusLegacyFormat() {
        Self.run(unless: Self.bleakMissing()) { lab, _ in
            let peripheral = try Self.startNUS(lab, "legacy")
            for size in Self.nusSizes {
                let message = Self.randomText(size)
                let from = peripheral.stdout.count
                let send = try Self.sendNUS(lab, "legacy", [message], label: "send-\(size)")
                lab.expectExit(send)
                // The peripheral prints each value as bluetoothd hands it over: give the last one time to arrive.
                Thread.sleep(forTimeInterval: 0.5)
                let log = try lab.file("nus_legacy_\(size).log", Array(peripheral.stdout.dropFirst(from)))
                let (decoder, decoded) = try Self.legacyDecode(lab, "legacy_decode_\(size)", log)
                lab.expectExit(decoder)
                lab.expect(decoded == message, "legacy \(size): the values decode to \(decoded.count) bytes, not the \(size)-byte message")
                _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            }
            peripheral.stop()
        }
    }

    /// Check 29 (eom): the three messages in one `send --format eom` into the NUS peripheral; its log's values
    /// split at each value that is exactly "EOM" (PROTOCOL 4.2) are the three messages and nothing after the last.
    @Test("stock box: send --profile nus --format eom into a Python NUS peripheral: 10 B, 1 KiB, 100 KiB whole, exit 0",
        .tags(.hci0, .hci1))
    func nusEomFormat() {
        Self.run(unless: Self.bleakMissing()) { lab, _ in
            let messages = Self.nusSizes.map(Self.randomText)
            let peripheral = try Self.startNUS(lab, "eom")
            let send = try Self.sendNUS(lab, "eom", messages, label: "send")
            Thread.sleep(forTimeInterval: 0.5)
            peripheral.stop()
            lab.expectExit(send)
            let values = Self.writtenValues(peripheral.stdoutText)
            var received: [[UInt8]] = [], current: [UInt8] = []
            for value in values {
                if value == Array("EOM".utf8) { received.append(current); current = [] } else { current += value }
            }
            lab.expect(received == messages && current.isEmpty,
                "eom: \(values.count) values, \(received.count) messages (\(received.map(\.count))), \(current.count) bytes after the last EOM; expected the three messages")
        }
    }

    /// Starts Tests/lab/nus_peripheral.py on hci0 as "nus-FORMAT" (it writes every value to nus_FORMAT.bin and
    /// prints it); returns once it registered with bluetoothd.
    static func startNUS(_ lab: LabCheck, _ format: String) throws -> LabProcess {
        let peripheral = try startPython(lab, "nus-\(format)", "nus_peripheral.py", [
            "--adapter", "hci0", "--name", "nus-\(format)", "--out", lab.directory.appendingPathComponent("nus_\(format).bin").path])
        lab.expect(peripheral.waitForStdout(containing: "registered"), "nus_peripheral.py never registered with bluetoothd")
        return peripheral
    }

    /// `send --backend bluez --adapter hci1 --to nus-FORMAT --profile nus --format FORMAT` of `messages` (a file
    /// each, one send), at most 120 s.
    static func sendNUS(_ lab: LabCheck, _ format: String, _ messages: [[UInt8]], label: String) throws -> LabProcess {
        let files = try messages.enumerated().map { try lab.file("\(label)_\($0.offset).txt", $0.element).path }
        return try lab.run(label, lab.environment.msgpipe, ["send"] + bluez + ["--adapter", "hci1", "--to", "nus-\(format)",
            "--profile", "nus", "--format", format] + files, seconds: 120)
    }

    /// The values nus_peripheral.py printed ("write value: 45 4f 4d"), in order.
    static func writtenValues(_ log: String) -> [[UInt8]] {
        log.split(separator: "\n").filter { $0.hasPrefix("write value:") }.map { line in
            line.dropFirst("write value:".count).split(separator: " ").compactMap { UInt8($0, radix: 16) }
        }
    }
}
