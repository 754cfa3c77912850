import Foundation
import Testing

extension Lab.Core {
    /// Check 19d: `msgpipe-lab lab-probe coc-serve` on hci0 (a dynamic PSM, hci0's own advertising on for the
    /// central's link) takes 1 MiB of Transport over StreamLink from `coc-send` on hci1: both exit 0 and print the
    /// same CRC-32 (the lab tool prints lines, no JSON). The note has the goodput against l2test's raw LE channel
    /// between the same controllers (1 MiB in 512-byte SDUs, connect included), measured after it.
    @Test("1 MiB through Transport over an LE credit-based channel (StreamLink), acknowledged, same CRC-32", .tags(.hci0, .hci1))
    func channelBaseline() {
        LabCheck.run { lab in
            let env = lab.environment
            lab.controllerAdvertising(true)
            defer { lab.controllerAdvertising(false) }
            let serve = try lab.start("coc-serve", env.msgpipeLab, ["lab-probe", "coc-serve", "--adapter", "hci0"])
            lab.expect(serve.waitForStdout(containing: "listening on hci0 PSM"), "coc-serve never listened")
            let psm = serve.stdoutText.range(of: "PSM 0x").flatMap { Int(serve.stdoutText[$0.upperBound...].prefix { $0.isHexDigit }, radix: 16) }
            lab.expect(psm != nil, "coc-serve named no PSM")
            let send = try lab.run("coc-send", env.msgpipeLab, [
                "lab-probe", "coc-send", "--adapter", "hci1", "--to", env.addressA, "--psm", "\(psm ?? 0)", "--bytes", "\(Self.mebibyte)"], seconds: 300)
            serve.wait(seconds: 30)
            lab.expectExit(send)
            lab.expectExit(serve)
            // coc-send: "... bytes acknowledged in S s, R B/s, crc32 C"; coc-serve: "message 1 of B bytes, crc32 C".
            let sent = send.stdoutText.split(separator: "\n").first { $0.contains("acknowledged") }.map(String.init) ?? ""
            let crc = sent.range(of: "crc32 ").map { String(sent[$0.upperBound...]) } ?? ""
            lab.expect(!crc.isEmpty, "coc-send reported no acknowledged CRC-32")
            lab.expect(serve.stdoutText.split(separator: "\n").contains { $0.contains("of \(Self.mebibyte) bytes") && $0.hasSuffix("crc32 \(crc)") },
                "coc-serve has no 1 MiB message with coc-send's CRC-32 \(crc)")
            let rate = sent.range(of: " s, ").map { String(sent[$0.upperBound...].prefix { $0.isNumber }) } ?? "?"
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            // The raw baseline: l2test's LE channel on PSM 133.
            let receiver = try lab.start("l2test-r", "/usr/bin/l2test", ["-r", "-V", "le_public", "-P", "133", "-i", "hci0"])
            Thread.sleep(forTimeInterval: 1)
            let started = Date()
            let l2test = try lab.run("l2test-s", "/usr/bin/l2test", ["-s", "-V", "le_public", "-P", "133", "-i", "hci1", "-b", "512", "-N", "2048", env.addressA], seconds: 120)
            let seconds = Date().timeIntervalSince(started)
            receiver.stop(seconds: 10)
            lab.note("LE credit-based channel: Transport over StreamLink \(rate) B/s for 1 MiB; l2test raw 1 MiB sent in "
                + String(format: "%.2f s (%d B/s, connect included, exit %@)", seconds, Int(Double(Self.mebibyte) / seconds), "\(l2test.exit.map(String.init(describing:)) ?? "?")"))
        }
    }
}
