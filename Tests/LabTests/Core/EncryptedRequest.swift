import Foundation
import Testing

/// One `msgpipe serve --json` event line (the fields the lab judges).
struct ServeEventLine: Decodable {
    let event: String
    let id: String?
    let status: String?
    let ranCommand: Bool?
}

extension Lab.Core {
    /// Check 16: `msgpipe serve --key-file K --json --exec CMD` on hci0 and `msgpipe request --key-file K` on hci1:
    /// the command's output comes back (exit 0) and the request's plaintext never shows in btmon's ATT dump; a
    /// request sealed with another key is refused (exit 6, serve logs a failed handshake) and runs nothing: the
    /// command ran once in all. SIGTERM then stops serve while it waits in a Bluetooth accept.
    @Test("encrypted request/serve between the controllers; a wrong key is refused and runs nothing", .tags(.hci0, .hci1))
    func encryptedRequest() {
        LabCheck.run { lab in
            let env = lab.environment
            let key = lab.directory.appendingPathComponent("secure.key").path
            let otherKey = lab.directory.appendingPathComponent("secure_other.key").path
            for (label, path) in [("keygen", key), ("keygen-other", otherKey)] {
                lab.expectExit(try lab.run(label, env.msgpipe, ["keygen", "--out", path], seconds: 30))
            }
            let ran = lab.directory.appendingPathComponent("ran").path
            let serve = try lab.start("serve", env.msgpipe, [
                "serve", "--adapter", "hci0", "--name", "msgpipe-secure", "--key-file", key,
                "--state", lab.directory.appendingPathComponent("state").path, "--json",
                "--exec", "echo ran >> '\(ran)'; printf \"approved:\"; cat"])
            lab.expect(serve.waitForStderr(containing: "advertising"), "serve never advertised")
            let request = try lab.run("request", env.msgpipe, [
                "request", "--adapter", "hci1", "--to", env.addressA, "--key-file", key, "--id", "lab-1", "--timeout", "120"],
                input: try lab.file("pay.txt", Array("pay 12.50 EUR".utf8)), seconds: 150)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            let wrongKey = try lab.run("request-wrong-key", env.msgpipe, [
                "request", "--adapter", "hci1", "--to", env.addressA, "--key-file", otherKey, "--id", "lab-2", "--timeout", "120"],
                input: try lab.file("pay-other.txt", Array("pay 1.00 EUR".utf8)), seconds: 150)
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)
            serve.stop(seconds: 30)
            lab.expectExit(request)
            lab.expect(request.stdoutText.trimmingCharacters(in: .newlines) == "approved:pay 12.50 EUR", "request's output: \"\(request.stdoutText)\", expected \"approved:pay 12.50 EUR\"")
            lab.expectExit(wrongKey, .status(6))
            lab.expectExit(serve)
            let events = serve.jsonLines(ServeEventLine.self)
            lab.expect(events.contains { $0.event == "request" && $0.id == "lab-1" && $0.status == "ok" && $0.ranCommand == true },
                "serve --json has no request lab-1 with status ok that ran its command")
            lab.expect(events.contains { $0.event == "handshake-failed" }, "serve --json has no handshake-failed event for the wrong key")
            // "pay 12.50" in btmon's hex dump, spaces removed.
            let air = lab.btmonSinceStart().lowercased().replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\n", with: "")
            lab.expect(!air.contains("7061792031322e3530"), "the request's plaintext shows in btmon's dump")
            let runs = ((try? String(contentsOfFile: ran, encoding: .utf8)) ?? "").split(separator: "\n").count
            lab.expect(runs == 1, "the command ran \(runs) times, expected once")
        }
    }
}
