import Foundation
import Testing

extension Lab.Core {
    /// Whether the lab has hci2 and msgpipe listen takes `--max-centrals` (checks 19-19c).
    static var severalCentrals: Bool {
        guard let env = LabEnvironment.current, env.addressC != nil else { return false }
        return labShell([env.msgpipe, "listen", "--help"]).output.contains("--max-centrals")
    }

    /// The files in `directory` (listen --out-dir renames a message into place once it is whole).
    static func received(_ directory: URL) -> [[UInt8]] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { (try? Data(contentsOf: directory.appendingPathComponent($0))).map { [UInt8]($0) } }
    }

    /// Starts `listen --adapter hci0 --name NAME --max-centrals 2 --connections 2 --out-dir DIR` (plus `extra`);
    /// returns it and DIR once it advertises.
    static func startTwoCentralListen(_ lab: LabCheck, name: String, _ extra: [String] = []) throws -> (LabProcess, URL) {
        let inbox = lab.directory.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let listen = try lab.startListen(["--adapter", "hci0", "--name", name, "--max-centrals", "2", "--connections", "2", "--out-dir", inbox.path] + extra)
        return (listen, inbox)
    }

    /// Waits for both sends (`seconds` each) and listen (60 s): all exit 0, and `b` and `c` are whole in `inbox`.
    /// Returns the seconds from `started` to both sends' end.
    static func expectBothIntact(_ lab: LabCheck, _ sends: (LabProcess, LabProcess), seconds: Double, since started: Date,
        listen: LabProcess, inbox: URL, _ b: [UInt8], _ c: [UInt8]) -> Double {
        sends.0.wait(seconds: seconds)
        sends.1.wait(seconds: seconds)
        let both = Date().timeIntervalSince(started)
        listen.wait(seconds: 60)
        lab.expectExit(sends.0)
        lab.expectExit(sends.1)
        lab.expectExit(listen)
        let files = received(inbox)
        lab.expect(files.contains(b), "hci1's file is not intact in listen's --out-dir (\(files.count) files)")
        lab.expect(files.contains(c), "hci2's file is not intact in listen's --out-dir (\(files.count) files)")
        return both
    }

    /// Check 19b: `send` from hci1 and from hci2, 1 MiB each, into one `listen --max-centrals 2`: hci2 starts once
    /// hci1's link is up (started together, hci1's Create Connection once hung in the emulator), and both
    /// transfers run at the same time. Both exit 0, listen ends after its two connections, each file arrives intact
    /// in --out-dir. The note has the pair's wall time against one alone (check 12's, from OUT/t12.json).
    @Test("two msgpipe sends (hci1, hci2) of 1 MiB each at once into one listen: both files intact",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Core.severalCentrals, "needs hci2 and listen --max-centrals"))
    func twoSendsAtOnce() {
        LabCheck.run { lab in
            let env = lab.environment
            let (b, c) = (LabCheck.randomBytes(Self.mebibyte), LabCheck.randomBytes(Self.mebibyte))
            let (fileB, fileC) = (try lab.file("mib_b.bin", b), try lab.file("mib_c.bin", c))
            let (listen, inbox) = try Self.startTwoCentralListen(lab, name: "msgpipe-many")
            let started = Date()
            let sendB = try lab.start("send-b", env.msgpipe, ["send", "--adapter", "hci1", "--to", "msgpipe-many", "--json", "--verbose", fileB.path])
            lab.expect(sendB.waitForStderr(containing: "link connected"), "send on hci1 never said its link connected")
            let sendC = try lab.start("send-c", env.msgpipe, ["send", "--adapter", "hci2", "--to", "msgpipe-many", "--json", fileC.path])
            let pair = Self.expectBothIntact(lab, (sendB, sendC), seconds: 600, since: started, listen: listen, inbox: inbox, b, c)
            let alone = (try? Data(contentsOf: env.outDirectory.appendingPathComponent("t12.json")))
                .flatMap { try? JSONDecoder().decode(SendLine.self, from: $0) }
            lab.note("two sends of 1 MiB at once: " + String(format: "%.1f", pair)
                + " s for the pair (wall clock, from starting the first); one alone: \(alone.map { "\($0.seconds)" } ?? "?") s (check 12, first write to acknowledgement)")
        }
    }

    /// Check 19c: two sends of 256 KiB started at the same instant from hci1 and hci2 (both Create Connections in
    /// flight at once) into one `listen --max-centrals 2`: the lab's btvirt keeps a Create Connection pending until
    /// its target advertises, as a radio does, and a central tries a failed first connect again within
    /// --connect-timeout; both exit 0 and both files arrive intact. btmon's connect lines go to `connects.txt`;
    /// the note has the time and the retries.
    @Test("two msgpipe sends (hci1, hci2) started at the same instant into one listen: both served, both files intact",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Core.severalCentrals, "needs hci2 and listen --max-centrals"))
    func twoSendsSameInstant() {
        LabCheck.run { lab in
            let env = lab.environment
            let (b, c) = (LabCheck.randomBytes(262_144), LabCheck.randomBytes(262_144))
            let (fileB, fileC) = (try lab.file("kib256_b.bin", b), try lab.file("kib256_c.bin", c))
            let (listen, inbox) = try Self.startTwoCentralListen(lab, name: "msgpipe-same", ["--verbose"])
            let started = Date()
            let sendB = try lab.start("send-b", env.msgpipe, ["send", "--adapter", "hci1", "--to", "msgpipe-same", "--json", "--verbose", fileB.path])
            let sendC = try lab.start("send-c", env.msgpipe, ["send", "--adapter", "hci2", "--to", "msgpipe-same", "--json", "--verbose", fileC.path])
            let both = Self.expectBothIntact(lab, (sendB, sendC), seconds: 120, since: started, listen: listen, inbox: inbox, b, c)
            // LE Create Connection, LE (Enhanced) Connection Complete, Add Advertising, LE Set (Extended) Advertising Enable.
            let connects = lab.btmonSinceStart().split(separator: "\n").filter { line in
                guard let first = line.first, "<>@".contains(first) else { return false }
                return ["(0x08|0x000d)", "(0x08|0x000a)", "(0x08|0x0039)", "(0x3e) plen 19", "(0x3e) plen 31"].contains { line.contains($0) }
                    || (line.contains("MGMT Command") && line.contains("(0x003e)"))
            }
            try? connects.prefix(40).joined(separator: "\n").write(to: lab.directory.appendingPathComponent("connects.txt"), atomically: true, encoding: .utf8)
            let retries = (sendB.stderr + sendC.stderr).components(separatedBy: "trying again").count - 1
            lab.note("two sends started at the same instant: both done after " + String(format: "%.1f s", both) + "; retries: \(retries)")
        }
    }
}
