import Simulator
import Transport

/// How `msgpipe bench` prints a ``TransferReport``: a table for people, one JSON object for machines.
enum BenchReportFormat {
    /// One reported value: the table prints its text, the JSON object its JSON type.
    enum Value: Encodable {
        case text(String)
        case integer(Int)
        case unsigned(UInt64)
        case number(Double)
        case flag(Bool)

        var tableText: String {
            switch self {
            case let .text(text): text
            case let .integer(value): "\(value)"
            case let .unsigned(value): "\(value)"
            case let .number(value): "\(value)"
            case let .flag(value): "\(value)"
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case let .text(text): try container.encode(text)
            case let .integer(value): try container.encode(value)
            case let .unsigned(value): try container.encode(value)
            case let .number(value): try container.encode(value)
            case let .flag(value): try container.encode(value)
            }
        }
    }

    static func fields(_ report: TransferReport, scenario: TransferScenario) -> [(String, Value)] {
        let link = scenario.link
        return [
            ("phy", .text(link.phy.rawValue)),
            ("ll_payload", .integer(link.linkLayerPayload)),
            ("mtu", .integer(link.attMTU)),
            ("interval_ms", number(Double(nanoseconds(link.connectionInterval)) / 1e6)),
            ("encrypted", .flag(link.encrypted)),
            ("seed", .unsigned(scenario.seed)),
            ("messages_sent", .integer(report.messagesSent)),
            ("messages_delivered", .integer(report.messagesDelivered)),
            ("messages_lost", .integer(report.messagesLost)),
            ("messages_duplicated", .integer(report.messagesDuplicated)),
            ("messages_corrupted", .integer(report.messagesCorrupted)),
            ("messages_out_of_order", .integer(report.messagesOutOfOrder)),
            ("send_failures", .integer(report.sendFailures)),
            ("payload_bytes", .integer(report.payloadBytes)),
            ("seconds", number(report.seconds)),
            ("goodput_kbps", number(report.goodputKbps)),
            ("limit_kbps", number(report.limitKbps)),
            ("efficiency", number(report.efficiency)),
            ("packets_sent", .integer(report.link.packetsSent[0])),
            ("packets_lost", .integer(report.link.packetsLost)),
            ("acks_sent", .integer(report.link.packetsSent[1])),
            ("disconnects", .integer(report.link.disconnects)),
            ("completed", .flag(report.completed)),
        ]
    }

    static func json(_ report: TransferReport, scenario: TransferScenario) -> String {
        JSONLine.text([String: Value](uniqueKeysWithValues: fields(report, scenario: scenario)))
    }

    static func table(_ report: TransferReport, scenario: TransferScenario) -> String {
        let rows = fields(report, scenario: scenario)
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { name, value in
            name + String(repeating: " ", count: width - name.count + 2) + value.tableText
        }.joined(separator: "\n")
    }

    /// A number with at most four decimals (0 when it is not finite).
    private static func number(_ value: Double) -> Value {
        JSONLine.rounded(value, decimals: 4).map(Value.number) ?? .integer(0)
    }
}
