import Foundation
import Testing

extension Lab.Roles {
    /// Check 26a: the legacy format (the seeds' Start/End) from a peripheral in seed 000_*'s layout into BlueZ's
    /// gatttool on hci1, an independent central, over one connection as a phone app would: `connect`, `char-desc`
    /// finds FFF1's CCCD, `char-write-req CCCD 0100` subscribes (each command waits, bounded, for what it needs).
    /// Its "Notification handle = ... value: ..." lines, decoded by Tests/lab/legacy_decode.py (written apart from
    /// Sources/Framing), are the 4 KiB message byte for byte. 4 KiB: with 32 KiB gatttool printed only part of the
    /// values (notifications have no flow control, and gatttool reads slowly); send exit 0 only says the
    /// notifications were handed to the link, the End value that gatttool got them all.
    @Test("legacy from a peripheral (custom:FFF0:FFF2:FFF1) into gatttool (one connection: discover, subscribe, --listen): the notifications decode to the 4 KiB message",
        .tags(.hci0, .hci1))
    func legacyIntoGatttool() {
        LabCheck.run { lab in
            let env = lab.environment
            let message = LabCheck.randomBytes(4096)
            let file = try lab.file("legacy_small.bin", message)
            let send = try lab.start("send", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-legacy",
                "--format", "legacy", "--profile", Self.legacyProfile, file.path])
            lab.expect(send.waitForStderr(containing: "advertising"), "send --name never advertised")
            let gatttool = try lab.start("gatttool", "/usr/bin/gatttool", ["-i", "hci1", "-b", env.addressA, "-t", "public", "-I"], interactive: true)
            gatttool.type("connect")
            lab.expect(gatttool.waitForStdout(containing: "Connection successful"), "gatttool never connected")
            gatttool.type("char-desc")
            var cccd: String?
            Self.waitUntil(seconds: 30) {
                cccd = Self.cccd(gatttool.stdoutText)
                return cccd != nil
            }
            lab.expect(cccd != nil, "gatttool's char-desc found no CCCD after FFF1")
            gatttool.type("char-write-req \(cccd ?? "0x0000") 0100")
            // "End" (45 6e 64): the legacy format's last value.
            lab.expect(gatttool.waitForStdout(containing: "value: 45 6e 64 ", seconds: 150), "gatttool never got the End notification")
            gatttool.type("disconnect")
            Thread.sleep(forTimeInterval: 0.5)
            gatttool.type("exit")
            send.wait(seconds: 200)
            gatttool.wait(seconds: 30)
            lab.expectExit(send)
            lab.expect(gatttool.stdoutText.contains("written successfully"), "gatttool's char-write-req of the CCCD was not written successfully")
            let decoded = lab.directory.appendingPathComponent("legacy_gatttool.bin")
            let decoder = try lab.run("legacy_decode", "/usr/bin/python3", [FileManager.default.currentDirectoryPath + "/Tests/lab/legacy_decode.py",
                gatttool.stdoutFile.path, decoded.path], seconds: 60)
            lab.expectExit(decoder)
            lab.expect(decoder.stdoutText.contains("1 whole messages (4096 bytes)"), "legacy_decode did not find the one 4096-byte message")
            let bytes = (try? Data(contentsOf: decoded)).map { [UInt8]($0) } ?? []
            lab.expect(bytes == message, "the notifications decode to \(bytes.count) bytes, not the 4 KiB message")
            for line in decoder.stdoutText.split(separator: "\n") where line.hasPrefix("legacy_decode:") { lab.note(String(line)) }
        }
    }

    /// The handle of the first CCCD (2902) after FFF1's value in gatttool's char-desc lines ("handle: 0x0007,
    /// uuid: ..."), nil before char-desc listed it.
    static func cccd(_ output: String) -> String? {
        let lines = output.split(separator: "\n")
        guard let value = lines.firstIndex(where: { $0.contains("uuid: 0000fff1-") }),
            let descriptor = lines[(value + 1)...].first(where: { $0.contains("uuid: 00002902-") }),
            let range = descriptor.range(of: "handle: 0x")
        else { return nil }
        let digits = descriptor[range.upperBound...].prefix { $0.isHexDigit }
        return digits.isEmpty ? nil : "0x" + digits
    }
}
