import Simulator
import Transport

/// How `msgpipe bench` prints a ``TransferReport``: a table for people, one JSON object for machines.
enum BenchReportFormat {
    static func fields(_ report: TransferReport, scenario: TransferScenario) -> [(String, String)] {
        let link = scenario.link
        return [
            ("phy", quoted(link.phy.rawValue)),
            ("ll_payload", "\(link.linkLayerPayload)"),
            ("mtu", "\(link.attMTU)"),
            ("interval_ms", number(Double(nanosecondsOf(link.connectionInterval)) / 1e6)),
            ("encrypted", "\(link.encrypted)"),
            ("seed", "\(scenario.seed)"),
            ("messages_sent", "\(report.messagesSent)"),
            ("messages_delivered", "\(report.messagesDelivered)"),
            ("messages_lost", "\(report.messagesLost)"),
            ("messages_duplicated", "\(report.messagesDuplicated)"),
            ("messages_corrupted", "\(report.messagesCorrupted)"),
            ("messages_out_of_order", "\(report.messagesOutOfOrder)"),
            ("send_failures", "\(report.sendFailures)"),
            ("payload_bytes", "\(report.payloadBytes)"),
            ("seconds", number(report.seconds)),
            ("goodput_kbps", number(report.goodputKbps)),
            ("limit_kbps", number(report.limitKbps)),
            ("efficiency", number(report.efficiency)),
            ("packets_sent", "\(report.link.packetsSent[0])"),
            ("packets_lost", "\(report.link.packetsLost)"),
            ("acks_sent", "\(report.link.packetsSent[1])"),
            ("disconnects", "\(report.link.disconnects)"),
            ("completed", "\(report.completed)"),
        ]
    }

    static func json(_ report: TransferReport, scenario: TransferScenario) -> String {
        "{" + fields(report, scenario: scenario).map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }

    static func table(_ report: TransferReport, scenario: TransferScenario) -> String {
        let rows = fields(report, scenario: scenario)
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { name, value in
            name + String(repeating: " ", count: width - name.count + 2) + value.filter { $0 != "\"" }
        }.joined(separator: "\n")
    }

    private static func quoted(_ text: String) -> String { "\"\(text)\"" }

    /// A JSON-safe number with at most four decimals.
    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        return "\((value * 10_000).rounded() / 10_000)"
    }

    private static func nanosecondsOf(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
