import BLELink
import Foundation
import Testing

/// The connection parameters of a `send --json` or `listen --json` line (``LinkParameterFields`` in the CLI).
struct ParametersLine: Decodable {
    let intervalMs: [Double]?
    let changedByPeer: Bool?
    let phy: String?

    private enum CodingKeys: String, CodingKey {
        case phy
        case intervalMs = "interval_ms"
        case changedByPeer = "changed_by_peer"
    }
}

extension Lab.Roles {
    /// btmon's decoded trace as lines: the only witness of what went over the air.
    typealias Trace = [Substring]

    /// Whether a line `header` (a command's or event's first line) at index `i` has `text` in one of the next
    /// `within` lines (grep -A within).
    static func follows(_ trace: Trace, _ i: Int, within: Int, _ text: String) -> Bool {
        trace[(i + 1)..<min(i + 1 + within, trace.count)].contains { $0.contains(text) }
    }

    /// The indices of LE Create Connection commands (on `controller` when given, e.g. "[hci0]").
    static func createConnections(_ trace: Trace, on controller: String? = nil) -> [Int] {
        trace.indices.filter { i in trace[i].contains("(0x08|0x000d)") && (controller.map { trace[i].contains($0) } ?? true) }
    }

    /// Check 28p: connection parameters, chosen and seen on the air. `listen --conn-interval 100-150` on hci0 (the
    /// adapter's default range, so its kernel sends an L2CAP Connection Parameter Update Request to a central
    /// outside it); `send --conn-interval 50 --conn-latency 2 --supervision-timeout 2000 --phy 2m` on hci1 (which
    /// must have LE 2M). btmon: LE Create Connection carries 50 ms, latency 2, 2000 ms; the peripheral's request
    /// holds 100-150 ms (min 80 in 1.25 ms units); hci1's LE Set Default PHY has LE 2M in its TX and RX PHYs, and
    /// hci1 accepts it. send --verbose reports what it asked for and, once, that the peer changed them; send
    /// --json has 100-150 ms with `changed_by_peer` true. The lab's btvirt emulates LE Set PHY, but nothing here
    /// issues one (the link stays on LE 1M, and there is no radio): a Connection Update Complete, any LE Set PHY
    /// or PHY Update Complete and send's "phy" go to the notes, not the verdict.
    @Test("connection parameters chosen: LE Create Connection carries the central's, the peripheral asks for its range, both on the air",
        .tags(.hci0, .hci1))
    func connectionParameters() {
        LabCheck.run { lab in
            let env = lab.environment
            let message = LabCheck.randomBytes(4096)
            let file = try lab.file("params.bin", message)
            // mgmt's Get PHY Configuration, what `btmgmt phy` prints as "Supported phys".
            let supported = (try? ManagementSocket().phyConfiguration(controller: 1))?.supported
            lab.expect(supported?.isSuperset(of: [.le2MTransmit, .le2MReceive]) ?? false,
                "hci1 lacks LE 2M (supported: \(supported.map { "\($0)" } ?? "unknown")): the lab's btvirt patch is not in use?")
            let listen = try lab.startListen(Self.kernel + ["--adapter", "hci0", "--name", "msgpipe-params", "--conn-interval", "100-150", "--count", "1"])
            let send = try lab.run("send", env.msgpipe, ["send"] + Self.kernel + ["--adapter", "hci1", "--to", "msgpipe-params",
                "--conn-interval", "50", "--conn-latency", "2", "--verbose", "--supervision-timeout", "2000", "--phy", "2m", "--json", file.path],
                seconds: 120)
            listen.wait(seconds: 60)
            lab.expectExit(send)
            lab.expectExit(listen)
            lab.expect(listen.stdout == message, "listen wrote \(listen.stdout.count) bytes, not the 4 KiB message")
            let trace = lab.btmonSinceStart().split(separator: "\n")
            lab.expect(Self.createConnections(trace).contains {
                Self.follows(trace, $0, within: 8, "Min connection interval: 50.00 msec") && Self.follows(trace, $0, within: 10, "Connection latency: 2 ")
                    && Self.follows(trace, $0, within: 12, "Supervision timeout: 2000 msec")
            }, "no LE Create Connection with 50 ms, latency 2 and 2000 ms in btmon")
            let requests = trace.indices.filter { trace[$0].contains("Connection Parameter Update Req") }
            lab.expect(!requests.isEmpty, "the peripheral never asked for its range (no L2CAP Connection Parameter Update Request)")
            lab.expect(requests.contains { Self.follows(trace, $0, within: 6, "Min interval: 80") || Self.follows(trace, $0, within: 6, "Min interval: 100") },
                "the Connection Parameter Update Request does not hold 100-150 ms")
            lab.expect(Self.setDefaultPHYHas2M(trace), "hci1's LE Set Default PHY does not carry LE 2M in its TX and RX PHYs")
            // A Command Complete of hci1 (an event's first line, then the command it answers, then its status).
            let accepted = trace.indices.contains { i in
                trace[i].hasPrefix(">") && trace[i].contains("[hci1]") && (i + 1...i + 2).contains { j in
                    j < trace.count && trace[j].contains("LE Set Default PHY (0x08|0x0031)") && Self.follows(trace, j, within: 1, "Status: Success")
                }
            }
            lab.expect(accepted, "hci1 did not accept LE Set Default PHY (no Command Complete with Success)")
            lab.expect(send.stderr.contains("requested interval 50 ms, latency 2, supervision timeout 2000 ms"), "send --verbose never reported what it asked for")
            let changed = send.stderr.components(separatedBy: "the peer changed the connection parameters: interval 100-150 ms").count - 1
            lab.expect(changed == 1, "send --verbose said \(changed) times that the peer changed them, expected once")
            let line = send.jsonLines(ParametersLine.self).first
            lab.expect(line?.changedByPeer == true && line?.intervalMs == [100, 150],
                "send --json: interval_ms \(line?.intervalMs.map { "\($0)" } ?? "absent"), changed_by_peer \(line?.changedByPeer.map(String.init) ?? "absent"); expected [100, 150] and true")
            let update = trace.indices.first { trace[$0].contains("Connection Update Complete") }
            let interval = update.flatMap { i in trace[(i + 1)..<min(i + 5, trace.count)].first { $0.contains("Connection interval:") } }
            lab.note("connection parameters: \(update == nil ? "no LE Connection Update Complete" : "LE Connection Update Complete seen")"
                + (interval.map { " " + $0.trimmingCharacters(in: .whitespaces) } ?? ""))
            let phyUpdates = trace.indices.filter { trace[$0].contains("LE PHY Update Complete") }.flatMap { i in
                trace[(i + 1)..<min(i + 5, trace.count)].filter { $0.contains("TX PHY:") || $0.contains("RX PHY:") }
                    .map { "PHY Update Complete: " + $0.trimmingCharacters(in: .whitespaces) }
            }
            lab.note("PHY: " + (trace.contains { $0.contains("LE Set PHY (0x08|0x0032)") } ? "LE Set PHY issued for the link; " : "")
                + (phyUpdates.isEmpty ? "no LE PHY Update Complete (the link stays on LE 1M)" : phyUpdates.prefix(4).joined(separator: " "))
                + "; send --json phy: \(line?.phy ?? "none")")
        }
    }

    /// Whether an LE Set Default PHY command of hci1 carries LE 2M among both its TX and its RX PHYs (btmon lists
    /// each preference's PHYs on the lines after it, until the next frame's first line).
    static func setDefaultPHYHas2M(_ trace: Trace) -> Bool {
        var inCommand = false, section = "", tx = false, rx = false
        for line in trace {
            if let first = line.first, "<>@=".contains(first) { inCommand = false }
            if line.hasPrefix("< HCI Command:") && line.contains("(0x08|0x0031)") && line.contains("[hci1]") {
                inCommand = true; tx = false; rx = false; section = ""
            }
            guard inCommand else { continue }
            if line.contains("TX PHYs preference") { section = "tx" }
            if line.contains("RX PHYs preference") { section = "rx" }
            if line.contains("LE 2M") { if section == "tx" { tx = true } else if section == "rx" { rx = true } }
            if tx && rx { return true }
        }
        return false
    }
}
