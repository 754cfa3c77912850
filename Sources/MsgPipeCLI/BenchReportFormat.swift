import MsgPipe
import Simulator

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
            ("bearer", .text(link.bearer == .gatt ? "gatt" : "channel")),
            ("gatt_limit_kbps", number(AirTimeModel(configuration: link).gattLimitKbps)),
            ("efficiency", number(report.efficiency)),
            ("packets_sent", .integer(report.link.packetsSent[0])),
            ("packets_lost", .integer(report.link.packetsLost)),
            ("acks_sent", .integer(report.link.packetsSent[1])),
            ("disconnects", .integer(report.link.disconnects)),
            ("completed", .flag(report.completed)),
        ]
    }

    static func json(_ report: TransferReport, scenario: TransferScenario) -> String {
        jsonText(fields(report, scenario: scenario))
    }

    static func table(_ report: TransferReport, scenario: TransferScenario) -> String {
        tableText(fields(report, scenario: scenario))
    }

    /// `report` as JSON or a table with `extra` fields first (a per-link report's limit is renamed
    /// `shared_limit_kbps` by the caller; `limit_kbps` stays the limit of one link owning the air).
    static func text(
        _ report: TransferReport, scenario: TransferScenario, json: Bool, extra: [(String, Value)]
    ) -> String {
        var rows = extra + fields(report, scenario: scenario).filter { name, _ in !extra.contains { $0.0 == name } }
        if let index = rows.firstIndex(where: { $0.0 == "limit_kbps" }), extra.contains(where: { $0.0 == "shared_limit_kbps" }) {
            rows[index].1 = number(AirTimeModel(configuration: scenario.link).limitKbps)
        }
        return json ? jsonText(rows) : tableText(rows)
    }

    // MARK: Real links

    /// A real link's rows: one per central (`central`: its index; `peer`: the listener, or as the peripheral the
    /// central's address), then with several centrals the aggregate (`central`: "all") over the wall time.
    /// `direction` is `to_peripheral` when this side was the central, `to_centrals` when it was the peripheral.
    /// Linux tells the negotiated ATT MTU and (msgpipe's own GATT on the kernel) the PHY, never the interval or
    /// the LL data length ("unknown"): `limit_kbps` is the library's ``PipeBenchmark/Line/limit(requestedInterval:)``
    /// at the largest interval asked for, its assumptions named in `limit_assumes`.
    static func real(
        _ report: PipeBenchmark.Report, link: String, role: LinkRole, size: Int, requestedIntervalUnits: UInt16? = nil
    ) -> [[(String, Value)]] {
        let interval = requestedIntervalUnits.map { ConnectionParameters.intervalUnit * Int($0) }
        let intervalText = requestedIntervalUnits.map {
            "interval \(ConnectionParameters.millisecondsText(intervalUnits: $0)) ms (requested)"
        } ?? "interval 7.5 ms"
        return report.lines.map { line -> [(String, Value)] in
            let limit = line.limit(requestedInterval: interval)
            let assumedPHY = "phy \(limit.phy.rawValue)" + (limit.phyMeasured ? " (measured)" : "")
            var row: [(String, Value)] = [
                ("link", .text(link)), ("central", line.index.map(Value.integer) ?? .text("all")),
                ("centrals", .integer(report.results.count)),
                ("direction", .text(role == .central ? "to_peripheral" : "to_centrals")), ("peer", .text(line.peer)),
                ("phy", .text(line.phy?.description ?? "unknown")), ("ll_payload", .text("unknown")),
                ("interval_ms", .text("unknown")),
                ("mtu", line.mtu.map(Value.integer) ?? .text("unknown")),
                ("messages_sent", .integer(line.messagesSent)), ("messages_delivered", .integer(line.messagesDelivered)),
                ("message_size", .integer(size)),
                ("payload_bytes", .integer(line.payloadBytes)), ("seconds", number(line.seconds)),
                ("goodput_kbps", number(line.goodputKbps)), ("messages_per_s", number(line.messagesPerSecond)),
                ("limit_kbps", limit.kbps.map(number) ?? .text("unknown")),
                ("limit_assumes", .text("\(assumedPHY), ll_payload \(limit.linkLayerPayload), \(intervalText), negotiated mtu")),
                ("efficiency", limit.efficiency.map(number) ?? .text("unknown")), ("completed", .flag(line.completed)),
            ]
            if let carrier = line.carrier { row.append(("carrier", .text(carrier.rawValue))) }
            return row
        }
    }

    /// Each failed transfer's line, in the CLI's words (`peers`: the several `--to`, else empty).
    static func failures(_ report: PipeBenchmark.Report, link: LinkOptions, peers: [String], size: Int) -> [Int: String] {
        var lines: [Int: String] = [:]
        for result in report.results {
            switch result.failure {
            case nil: continue
            case let .connect(error)?:
                lines[result.index] = peers.isEmpty ? link.connectFailure(error) : "cannot connect to \(peers[result.index]): \(cli: error)"
            case let .message(index, error)?: lines[result.index] = "message \(index): \(cli: error)"
            case let .tooLarge(limit)?: lines[result.index] = "--size \(size) exceeds the listener's maximum message size of \(limit)"
            }
        }
        return lines
    }

    static func jsonText(_ rows: [(String, Value)]) -> String {
        JSONLine.text([String: Value](uniqueKeysWithValues: rows))
    }

    static func tableText(_ rows: [(String, Value)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { name, value in
            name + String(repeating: " ", count: width - name.count + 2) + value.tableText
        }.joined(separator: "\n")
    }

    /// A number with at most four decimals (0 when it is not finite).
    static func number(_ value: Double) -> Value {
        JSONLine.rounded(value, decimals: 4).map(Value.number) ?? .integer(0)
    }
}
