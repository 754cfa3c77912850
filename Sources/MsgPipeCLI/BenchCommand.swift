import ArgumentParser
import MsgPipe
import Simulator

/// `msgpipe bench --link sim`: runs the real Transport over the BLE air-time simulator and reports goodput
/// against the configuration's theoretical limit. On a real link (``PipeBenchmark``) it measures either
/// direction through the full Transport: `--to NAME|ADDRESS` (or `--link unix:PATH`) sends as the central to
/// a running `msgpipe listen`; `--name NAME` (or `--link unix:PATH --role peripheral`) serves as the
/// peripheral and sends to the `msgpipe listen --to NAME` centrals that subscribe.
/// Exit status 0 when every message arrived exactly once and intact, 2 when not, 64 for invalid options.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Transport goodput over a simulated BLE link (deterministic for a seed) or a real one.",
        discussion: """
            --link sim (default): the BLE air-time simulator, deterministic for a seed; --centrals N links share \
            the peripheral's air, --peripherals N (1 to 7) one central's: per-link and aggregate goodput, the \
            air-time limit and the fraction of it achieved, and fairness (Jain's index, the largest deviation from \
            the mean).

            On a real link the messages go through the full Transport and count once the receiver acknowledged \
            them. Central to peripheral: --to NAME|ADDRESS over Bluetooth, or --link unix:PATH, against a \
            running `msgpipe listen`; --centrals N connects N centrals from this process at once. Peripheral to \
            centrals: --name NAME over Bluetooth, or --link unix:PATH --role peripheral; bench advertises \
            (or listens on PATH), waits until --centrals centrals subscribed (`msgpipe listen --to NAME`, or \
            `--role central` over unix) and sends to every one at once. One report per central, then the \
            aggregate over the wall time when there are several; "direction" says which way was measured. \
            The negotiated ATT MTU and the PHY are reported where the OS tells them, with the simulator's \
            air-time limit for them.

            Reference: docs/CLI.md.
            """)

    @Option(help: "The link to measure over: sim (the BLE air-time simulator) or unix:PATH (a running listen).")
    var link = "sim"
    @Option(help: "Be the central and connect to this listener (ADDRESS, advertised NAME or unix:PATH); up to 7 times: one central per peer at once.")
    var to: [String] = []
    @Option(help: "Bluetooth: be the peripheral, advertise NAME and send to the centrals that subscribe.")
    var name: String?
    @Option(help: "Over --link unix:PATH: central (default: connect to a listen) or peripheral (listen on PATH and send).")
    var role: LinkRole?
    @Option(help: "Bluetooth: the adapter (hciN or its address).")
    var adapter: String?
    @Option(help: "Bluetooth: the stack, bluez (through bluetoothd), kernel or auto (bluez when bluetoothd runs).")
    var backend: String?
    @Option(help: "Simulator: the PHY, 1m, 2m or coded (LE Coded at S=8, 125 kbit/s).")
    var phy: String = "1m"
    @Option(name: .customLong("ll-payload"), help: "Link-layer PDU payload, 27 to 251 (Data Length Extension).")
    var linkLayerPayload = 27
    @Option(help: "ATT MTU, 23 to 517 (a packet carries MTU - 3 bytes).")
    var mtu = 23
    @Option(help: "Simulator: gatt (ATT values, default) or channel (an LE credit-based L2CAP channel).")
    var bearer = "gatt"
    @Option(name: .customLong("channel-mtu"), help: "Simulator, --bearer channel: the SDU size (a packet carries 2 bytes less).")
    var channelMTU = LinkMode.channelSDU
    @Option(name: .customLong("channel-mps"), help: "Simulator, --bearer channel: the K-frame payload (MPS).")
    var channelMPS = 247
    @Option(name: .customLong("interval-ms"), help: "Connection interval in milliseconds, 7.5 to 4000.")
    var intervalMilliseconds = 30.0
    @Option(name: .customLong("packets-per-event"), help: "Cap on PDU exchanges per connection event.")
    var packetsPerEvent: Int?
    @Flag(help: "LE encryption: a 4-byte MIC on every data PDU.")
    var encrypted = false
    @Option(help: "Bytes per message.")
    var size = 1_048_576
    @Option(help: "Number of messages.")
    var messages = 1
    @Option(help: "Probability that a packet is lost (0 to 1).")
    var loss = 0.0
    @Option(help: "Probability that a packet is delivered twice.")
    var duplicate = 0.0
    @Option(help: "Probability that a packet arrives after the next one.")
    var reorder = 0.0
    @Option(help: "Probability that a packet has a bit flipped.")
    var corrupt = 0.0
    @Option(name: .customLong("disconnect-every"), help: "Drop the connection this many simulated seconds after each connect.")
    var disconnectEvery: Double?
    @Option(help: "Simulator: links sharing the peripheral's air. Real link: centrals at once (as the peripheral: to wait for).")
    var centrals: Int?
    @Option(help: "Simulator: peripherals one central's radio serves at once, 1 to 7.")
    var peripherals: Int?
    @Option(help: "Seed for faults and message contents.")
    var seed: UInt64 = 1
    @Flag(help: "Print one JSON object instead of a table.")
    var json = false
    @Option(name: .customLong("conn-interval"), help: ArgumentHelp("""
        Over Bluetooth: the connection interval to ask for, MIN[-MAX] ms (7.5 to 4000 in steps of 1.25; kernel \
        backend, CAP_NET_ADMIN). The simulator takes --interval-ms; --phy is the simulator's only.
        """, valueName: "MIN[-MAX]"))
    var connectionInterval: String?
    @Option(name: .customLong("conn-latency"), help: ArgumentHelp("Over Bluetooth: the latency to ask for (0 to 499).", valueName: "N"))
    var connectionLatency: String?
    @Option(name: .customLong("supervision-timeout"), help: ArgumentHelp(
        "Over Bluetooth: the supervision timeout to ask for, ms (100 to 32000 in steps of 10).", valueName: "MS"))
    var supervisionTimeout: String?

    func validate() throws {
        guard (1...16).contains(centralCount) else { throw ValidationError("--centrals must be 1 to 16") }
        if to.count > 1, centrals != nil { throw ValidationError("several --to connect one central to each: not with --centrals") }
        if let peripherals {
            guard centrals == nil else {
                throw ValidationError("--centrals and --peripherals exclude each other: one controller's air is shared "
                    + "either by centrals on one peripheral or by peripherals on one central")
            }
            guard (1...7).contains(peripherals) else { throw ValidationError("--peripherals must be 1 to 7") }
            guard !isReal else {
                throw ValidationError("--peripherals is for --link sim; over Bluetooth a central takes --to once per peripheral")
            }
        }
        let connection = try connectionParameters()
        if !isReal, connection != nil {
            throw ValidationError(
                "--conn-interval, --conn-latency and --supervision-timeout are for a real link; the simulator takes --interval-ms")
        }
        if isReal {
            // --backend bluez cannot carry connection parameters: a usage error, as for listen and send.
            _ = try realLink().options.bluetooth.pipeBackend(parameters: try connection?.request())
            guard size >= 1, messages >= 1 else { throw ValidationError("--size and --messages must be at least 1") }
        }
    }

    func run() async throws {
        if isReal { return try await runReal() }
        let scenario = try makeScenario()
        if let peripherals { return try runShared(scenario, links: peripherals, role: "peripherals") }
        if centralCount > 1 { return try runShared(scenario, links: centralCount, role: "centrals") }
        let report: TransferReport
        do {
            report = try SimulatedTransfer.run(scenario, sender: TransportEndpoint(), receiver: TransportEndpoint())
        } catch {
            throw ValidationError(error.description)
        }
        print(json ? BenchReportFormat.json(report, scenario: scenario) : BenchReportFormat.table(report, scenario: scenario))
        if !report.isExactlyOnceInOrder { throw ExitCode(2) }
    }

    /// `--centrals N` or `--peripherals N` (`role` names which, and is the count's field): N links share one
    /// controller's air; one line per link (with `link`, its slot's limit `shared_limit_kbps`), then the
    /// aggregate (`link`: "all") with the limit of one link owning the air (`limit_kbps`, `efficiency`), the
    /// slotted air's limit (`shared_limit_kbps`, `shared_efficiency`) and the links' fairness.
    private func runShared(_ scenario: TransferScenario, links: Int, role: String) throws {
        let shared: SharedAirReport
        do {
            shared = try SharedAir.report(scenario, linkCount: links) { (TransportEndpoint(), TransportEndpoint()) }
        } catch {
            throw ValidationError(error.description)
        }
        var lines = shared.links.enumerated().map { index, report in
            BenchReportFormat.text(report, scenario: scenario, json: json, extra: [
                ("link", .integer(index)), (role, .integer(links)),
                ("shared_limit_kbps", BenchReportFormat.number(report.limitKbps)),
            ])
        }
        lines.append(BenchReportFormat.text(shared.total, scenario: scenario, json: json, extra: [
            ("link", .text("all")), (role, .integer(links)),
            ("shared_limit_kbps", BenchReportFormat.number(shared.sharedLimitKbps)),
            ("shared_efficiency", BenchReportFormat.number(shared.sharedEfficiency)),
            ("jain_index", BenchReportFormat.number(shared.fairness.jainIndex)),
            ("max_deviation_pct", BenchReportFormat.number(shared.fairness.largestDeviationPercent)),
        ]))
        print(lines.joined(separator: json ? "\n" : "\n\n"))
        if !shared.isExactlyOnceInOrder { throw ExitCode(2) }
    }

    private var centralCount: Int { centrals ?? 1 }

    private var isReal: Bool {
        link != "sim" || !to.isEmpty || name != nil || adapter != nil || backend != nil || role != nil
    }

    /// The real link's connection parameter options (nil when none was given); a broken rule is a usage error.
    private func connectionParameters() throws -> ConnectionParameterOptions? {
        guard connectionInterval != nil || connectionLatency != nil || supervisionTimeout != nil else { return nil }
        var arguments: [String] = []
        if let connectionInterval { arguments += ["--conn-interval", connectionInterval] }
        if let connectionLatency { arguments += ["--conn-latency", connectionLatency] }
        if let supervisionTimeout { arguments += ["--supervision-timeout", supervisionTimeout] }
        do {
            return try ConnectionParameterOptions.parse(arguments)
        } catch {
            throw ValidationError(ConnectionParameterOptions.message(for: error))
        }
    }

    /// The real link's options, parsed as `listen`/`send` parse them, and this side's role.
    private func realLink() throws -> (options: LinkOptions, role: LinkRole) {
        var arguments: [String] = []
        if link != "sim" { arguments += ["--link", link] }
        for peer in to { arguments += ["--to", peer] }
        if let name { arguments += ["--name", name] }
        if let adapter { arguments += ["--adapter", adapter] }
        if let backend { arguments += ["--backend", backend] }
        if to.isEmpty, name == nil, link == "sim" {
            throw ValidationError("bench over Bluetooth needs --to NAME|ADDRESS (central) or --name NAME (peripheral)")
        }
        let options: LinkOptions
        do {
            options = try LinkOptions.parse(arguments)
        } catch {
            throw ValidationError(LinkOptions.message(for: error))
        }
        return (options, try options.role(role, default: .central))
    }

    private func runReal() async throws {
        let (options, role) = try realLink()
        let peers = to.count > 1 ? to : []
        let connection = try connectionParameters()
        guard let (report, failures) = await runBenchmark(options, role: role, peers: peers, connection: connection) else {
            throw ExitCode(2)
        }
        for (index, failure) in failures.sorted(by: { $0.key < $1.key }) {
            printError("central \(index): \(failure)")
        }
        // The limit assumes the slowest interval asked for (a controller picks one in the range).
        let requested = try connection?.request()?.interval?.maximum
        let rows = BenchReportFormat.real(report, link: options.displayName, role: role, size: size, requestedIntervalUnits: requested)
        print(rows.map { json ? BenchReportFormat.jsonText($0) : BenchReportFormat.tableText($0) }
            .joined(separator: json ? "\n" : "\n\n"))
        if !report.lines.allSatisfy(\.completed) { throw ExitCode(2) }
    }

    /// The library's ``PipeBenchmark`` from `role`'s side: as central one connector per `peers` (empty: the
    /// centrals all to `link`), as peripheral serving `link`. Nil (said on standard error) where the link could
    /// not be opened or served, or not every central subscribed; each failed transfer's line by index.
    private func runBenchmark(
        _ link: LinkOptions, role: LinkRole, peers: [String], connection: ConnectionParameterOptions?
    ) async -> (report: PipeBenchmark.Report, failures: [Int: String])? {
        let centrals = peers.isEmpty ? centralCount : peers.count
        let bench = PipeBenchmark(size: size, messages: messages, seed: seed)
        let side: PipeBenchmark.Side
        do {
            var options = try link.pipeOptions(format: .msgpipe, verbose: false, connection: connection)
            options.logger = CLILogging.logger("bench", verbose: false)
            if role == .peripheral {
                side = .peripheral(link.acceptor(options), centrals: centrals)
            } else {
                do {
                    let targets = peers.isEmpty ? Array(repeating: try link.peerAddress(), count: centrals) : peers
                    side = .centrals(connectingTo: targets, options: options)
                } catch {
                    printError(link.connectFailure(error))
                    return nil
                }
            }
        } catch {
            printError((role == .peripheral ? "cannot serve on \(link.displayName): " : "") + "\(cli: error)")
            return nil
        }
        do {
            let report = try await bench.run(side) { printError($0) }
            return (report, BenchReportFormat.failures(report, link: link, peers: peers, size: size))
        } catch let error as PipeBenchmark.PeripheralError {
            printError("\(error)")
        } catch {
            printError("cannot serve on \(link.displayName): \(cli: error)")
        }
        return nil
    }

    private func makeScenario() throws -> TransferScenario {
        guard let phy = LEPHY(rawValue: phy.lowercased()) else { throw ValidationError("--phy must be 1m, 2m or coded") }
        guard intervalMilliseconds.isFinite, intervalMilliseconds > 0 else {
            throw ValidationError("--interval-ms must be positive")
        }
        var link = BLELinkConfiguration(
            phy: phy, linkLayerPayload: linkLayerPayload, attMTU: mtu,
            connectionInterval: .microseconds(Int64((intervalMilliseconds * 1_000).rounded())),
            packetsPerEvent: packetsPerEvent, encrypted: encrypted)
        switch bearer {
        case "gatt": break
        case "channel": link.bearer = .channel(mtu: channelMTU, mps: channelMPS)
        default: throw ValidationError("--bearer must be gatt or channel, not '\(bearer)'")
        }
        var faults = SimulatedFaults(loss: loss, duplicate: duplicate, reorder: reorder, corrupt: corrupt)
        if let disconnectEvery {
            guard disconnectEvery.isFinite, disconnectEvery > 0 else {
                throw ValidationError("--disconnect-every must be a positive number of seconds")
            }
            faults.disconnectEvery = .milliseconds(Int64((disconnectEvery * 1_000).rounded()))
        }
        let scenario = TransferScenario(link: link, faults: faults, seed: seed, messageSize: size, messageCount: messages)
        do {
            try scenario.validate()
        } catch {
            throw ValidationError(error.description)
        }
        return scenario
    }
}
