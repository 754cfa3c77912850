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

    /// The limit GATT has on the same air (PHY, data length, interval, cap), to set a channel's beside.
    static func gattLimitKbps(_ link: BLELinkConfiguration) -> Double {
        var gatt = link
        gatt.bearer = .gatt
        return AirTimeModel(configuration: gatt).applicationThroughputLimit / 1000
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
            ("gatt_limit_kbps", number(Self.gattLimitKbps(link))),
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
            rows[index].1 = number(AirTimeModel(configuration: scenario.link).applicationThroughputLimit / 1000)
        }
        return json ? jsonText(rows) : tableText(rows)
    }

    // MARK: Real links

    /// What the link parameters a real link reports: the negotiated ATT MTU is known (GATT exchanged it), and
    /// the PHY where the kernel tells it (BT_PHY on msgpipe's own ATT socket, read after the transfer; not
    /// through bluetoothd or a UNIX socket). Linux gives applications neither the connection interval nor the
    /// LL data length (only the HCI events, root's btmon, see them), so they are "unknown", and `limit_kbps`
    /// is the simulator's limit at that MTU and the central's transmit PHY (2M when unknown) for the best
    /// values of the others (LL payload 251, 7.5 ms interval, no per-event cap), named in `limit_assumes`.
    /// With `--conn-interval` the limit takes the largest interval asked for instead of 7.5 ms.
    static let bestLink = (phy: BLEPhy.le2M, linkLayerPayload: 251, interval: Duration.microseconds(7_500))

    /// One row per central (`central`: its index; `peer`: the listener, or as the peripheral the central's
    /// address), then with several centrals the aggregate (`central`: "all") over `wallSeconds`. `direction`
    /// is `to_peripheral` when this side was the central, `to_centrals` when it was the peripheral.
    static func real(
        _ results: [PipeBenchmark.Result], wallSeconds: Double, link: String, role: LinkRole, size: Int, messages: Int,
        requestedIntervalUnits: UInt16? = nil
    ) -> [[(String, Value)]] {
        let interval = requestedIntervalUnits.map { ConnectionParameters.intervalUnit * Int($0) } ?? bestLink.interval
        let intervalText = requestedIntervalUnits.map {
            "interval \(ConnectionParameters.millisecondsText(intervalUnits: $0)) ms (requested)"
        } ?? "interval 7.5 ms"
        /// The simulator's PHY for the central's transmit PHY (nil: Coded, which the simulator does not model).
        func simulated(_ phy: LinkPHY?) -> BLEPhy? {
            guard let phy else { return bestLink.phy }
            return BLEPhy(rawValue: phy.transmit.rawValue)
        }
        func limitKbps(mtu: Int?, phy: LinkPHY?) -> Double? {
            guard let mtu, let simulatedPHY = simulated(phy) else { return nil }
            let configuration = BLELinkConfiguration(
                phy: simulatedPHY, linkLayerPayload: bestLink.linkLayerPayload, attMTU: min(max(mtu, 23), 517),
                connectionInterval: interval)
            return AirTimeModel(configuration: configuration).applicationThroughputLimit / 1000
        }
        func row(central: Value, peer: String, mtu: Int?, phy: LinkPHY?, sent: Int, delivered: Int, bytes: Int,
                 seconds: Double, completed: Bool) -> [(String, Value)] {
            let goodput = seconds > 0 ? Double(bytes * 8) / seconds / 1000 : 0
            let limit = limitKbps(mtu: mtu, phy: phy)
            let assumedPHY = phy.map { "phy \($0.transmit.rawValue) (measured)" } ?? "phy 2m"
            return [
                ("link", .text(link)), ("central", central), ("centrals", .integer(results.count)),
                ("direction", .text(role == .central ? "to_peripheral" : "to_centrals")), ("peer", .text(peer)),
                ("phy", .text(phy?.description ?? "unknown")), ("ll_payload", .text("unknown")),
                ("interval_ms", .text("unknown")),
                ("mtu", mtu.map(Value.integer) ?? .text("unknown")),
                ("messages_sent", .integer(sent)), ("messages_delivered", .integer(delivered)),
                ("message_size", .integer(size)),
                ("payload_bytes", .integer(bytes)), ("seconds", number(seconds)), ("goodput_kbps", number(goodput)),
                ("messages_per_s", number(seconds > 0 ? Double(delivered) / seconds : 0)),
                ("limit_kbps", limit.map(number) ?? .text("unknown")),
                ("limit_assumes", .text("\(assumedPHY), ll_payload 251, \(intervalText), negotiated mtu")),
                ("efficiency", limit.map { number($0 > 0 ? goodput / $0 : 0) } ?? .text("unknown")),
                ("completed", .flag(completed)),
            ]
        }
        var rows = results.map { result in
            row(central: .integer(result.index), peer: result.peer, mtu: result.mtu, phy: result.phy,
                sent: result.messagesDelivered + (result.succeeded ? 0 : 1), delivered: result.messagesDelivered,
                bytes: result.payloadBytes, seconds: result.seconds,
                completed: result.succeeded && result.messagesDelivered == messages)
                + (result.carrier.map { [("carrier", Value.text($0.rawValue))] } ?? [])
        }
        if results.count > 1 {
            let mtus = Set(results.compactMap(\.mtu))
            let mtu = mtus.count == 1 ? mtus.first : nil
            let phys = results.map(\.phy)
            let phy = phys.allSatisfy { $0 == phys.first } ? phys.first ?? nil : nil
            rows.append(row(
                central: .text("all"), peer: results.first?.peer ?? "", mtu: mtu, phy: phy,
                sent: results.reduce(0) { $0 + $1.messagesDelivered + ($1.succeeded ? 0 : 1) },
                delivered: results.reduce(0) { $0 + $1.messagesDelivered },
                bytes: results.reduce(0) { $0 + $1.payloadBytes }, seconds: wallSeconds,
                completed: results.allSatisfy { $0.succeeded && $0.messagesDelivered == messages }))
        }
        return rows
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
