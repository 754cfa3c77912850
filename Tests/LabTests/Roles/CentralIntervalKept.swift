import Foundation
import Testing

extension Lab.Roles {
    /// Check 28q: a peripheral without --conn-interval keeps the central's interval, and listen with several --to
    /// asks for its --conn-interval on every link. (a) `listen --name` on hci0 without connection parameters (the
    /// kernel backend widens hci0's default interval range while serving: Set Default System Configuration with
    /// only the interval TLVs, 7.5-208.75 ms as it starts and 30-50 ms again as it exits), `send --to
    /// --conn-interval 7.5-15 --json` from hci1: LE Create Connection carries 7.5-15 ms, no L2CAP Connection
    /// Parameter Update Request is on the air, send --json has `interval_ms` [7.5, 15] and `changed_by_peer`
    /// false. (b) `listen --to keep-s1 --to keep-s2 --conn-interval 20-25 --json` on hci0 from `send --name` on
    /// hci1 and hci2: both of hci0's LE Create Connection carry 20-25 ms, both --json lines have [20, 25], and no
    /// Update Request. The intervals btvirt picks go to the notes.
    @Test("a peripheral without --conn-interval keeps the central's 7.5-15 ms; listen --to x2 --conn-interval asks for 20-25 ms on each link",
        .tags(.hci0, .hci1, .hci2), .enabled(if: Lab.Roles.hasC, "the lab has no third controller"))
    func centralIntervalKept() {
        LabCheck.run { lab in
            let env = lab.environment
            let message = LabCheck.randomBytes(4096)
            let file = try lab.file("params.bin", message)

            // (a)
            let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-keep", "--count", "1", "--verbose"])
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci1", "--to", "msgpipe-keep", "--conn-interval",
                "7.5-15", "--verbose", "--json", file.path], seconds: 120)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expect(listen.stdout == message, "(a) listen wrote \(listen.stdout.count) bytes, not the 4 KiB message")
            let traceA = lab.btmonSinceStart()
            let a = traceA.split(separator: "\n")
            lab.expect(Self.createConnections(a, on: "[hci1]").contains {
                Self.follows(a, $0, within: 8, "Min connection interval: 7.50 msec") && Self.follows(a, $0, within: 9, "Max connection interval: 15.00 msec")
            }, "(a) no LE Create Connection of hci1 with 7.5-15 ms in btmon")
            lab.expect(!a.contains { $0.contains("Connection Parameter Update Req") }, "(a) a Connection Parameter Update Request went over the air")
            let line = send.jsonLines(ParametersLine.self).first
            lab.expect(line?.changedByPeer == false && line?.intervalMs == [7.5, 15],
                "(a) send --json: interval_ms \(line?.intervalMs.map { "\($0)" } ?? "absent"), changed_by_peer \(line?.changedByPeer.map(String.init) ?? "absent"); expected [7.5, 15] and false")
            // btmon prints a mgmt command as "@ MGMT Command: ... (0x004c) plen 10 ... [hci0]", then its bytes.
            let configurations = a.indices.filter { a[$0].hasPrefix("@ MGMT Command:") && a[$0].contains("(0x004c) plen 10 ") && a[$0].contains("[hci0]") }
                .compactMap { i in i + 1 < a.count ? Self.intervalTLVs(a[i + 1]) : nil }
            lab.expect(configurations.prefix(2) == ["17 00 02 06 00 18 00 02 a7 00", "17 00 02 18 00 18 00 02 28 00"],
                "(a) hci0's Set Default System Configuration (interval only): \(configurations), expected 7.5-208.75 ms while serving, then 30-50 ms")
            let completes = a.indices.filter { a[$0].contains("LE Connection Complete") || a[$0].contains("LE Enhanced Connection Complete") }
            let chosen = completes.lazy.compactMap { i in a[(i + 1)..<min(i + 5, a.count)].first { $0.contains("Connection interval:") } }.first
            lab.note("peripheral without --conn-interval: \(chosen.map { $0.trimmingCharacters(in: .whitespaces) } ?? "no Connection interval seen"); "
                + "Set Default System Configuration (interval only) on hci0: \(configurations.count) [\(configurations.joined(separator: ";"))]; "
                + "listen \(listen.stderr.contains("default connection interval range interval 7.5-") ? "widened" : "did not say it widened") hci0's default range; "
                + "send --json interval_ms \(line?.intervalMs.map { "\($0)" } ?? "absent")")
            _ = lab.waitForNoLinks(seconds: 20, endingThem: true)

            // (b)
            let both = try Self.listenToPeripherals(lab, [("keep-s1", file), ("keep-s2", file)], ["--conn-interval", "20-25"], seconds: 120)
            let b = String(lab.btmonSinceStart().utf8.dropFirst(traceA.utf8.count)) ?? ""
            let traceB = b.split(separator: "\n")
            let asked = Self.createConnections(traceB, on: "[hci0]").filter {
                Self.follows(traceB, $0, within: 8, "Min connection interval: 20.00 msec") && Self.follows(traceB, $0, within: 9, "Max connection interval: 25.00 msec")
            }
            lab.expect(asked.count >= 2, "(b) \(asked.count) LE Create Connection of hci0 with 20-25 ms in btmon, expected both")
            let intervals = both.jsonLines(ParametersLine.self).map(\.intervalMs)
            lab.expect(intervals.count == 2 && intervals.allSatisfy { $0 == [20, 25] }, "(b) listen --json intervals \(intervals), expected [20, 25] twice")
            lab.expect(!traceB.contains { $0.contains("Connection Parameter Update Req") }, "(b) a Connection Parameter Update Request went over the air")
        }
    }

    /// The interval TLVs of a Set Default System Configuration's bytes line ("17 00 02 XX XX 18 00 02 XX XX":
    /// types 0x0017 and 0x0018, the minimum and maximum interval), nil when the line has none.
    static func intervalTLVs(_ line: Substring) -> String? {
        let words: [Substring] = line.split(separator: " ")
        let bytes: [String] = words.filter { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }.map { String($0) }
        let shape = { (i: Int) -> Bool in
            Array(bytes[i..<(i + 3)]) == ["17", "00", "02"] && Array(bytes[(i + 5)..<(i + 8)]) == ["18", "00", "02"]
        }
        guard let start = bytes.indices.first(where: { $0 + 10 <= bytes.count && shape($0) }) else { return nil }
        return bytes[start..<(start + 10)].joined(separator: " ")
    }
}
