import Simulator
import ArgumentParser
import Transport

/// `msgpipe bench --link sim`: runs the real Transport over the BLE air-time simulator and reports goodput
/// against the configuration's theoretical limit. Exit status 0 when every message arrived exactly once and
/// intact, 2 when not, 64 for invalid options.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Transport goodput over a simulated BLE link (deterministic for a seed).")

    enum LinkKind: String, ExpressibleByArgument, CaseIterable {
        case sim
    }

    @Option(help: "The link to measure over: sim (the BLE air-time simulator).")
    var link: LinkKind = .sim
    @Option(help: "PHY: 1m or 2m.")
    var phy: String = "1m"
    @Option(name: .customLong("ll-payload"), help: "Link-layer PDU payload, 27 to 251 (Data Length Extension).")
    var linkLayerPayload = 27
    @Option(help: "ATT MTU, 23 to 517 (a packet carries MTU - 3 bytes).")
    var mtu = 23
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
    @Option(help: "Seed for faults and message contents.")
    var seed: UInt64 = 1
    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    func run() throws {
        let scenario = try makeScenario()
        let report: TransferReport
        do {
            report = try SimulatedTransfer.run(scenario, sender: TransportEndpoint(), receiver: TransportEndpoint())
        } catch {
            throw ValidationError(error.description)
        }
        print(json ? BenchReportFormat.json(report, scenario: scenario) : BenchReportFormat.table(report, scenario: scenario))
        if !report.isExactlyOnceInOrder { throw ExitCode(2) }
    }

    private func makeScenario() throws -> TransferScenario {
        guard let phy = BLEPhy(rawValue: phy.lowercased()) else { throw ValidationError("--phy must be 1m or 2m") }
        guard intervalMilliseconds.isFinite, intervalMilliseconds > 0 else {
            throw ValidationError("--interval-ms must be positive")
        }
        let link = BLELinkConfiguration(
            phy: phy, linkLayerPayload: linkLayerPayload, attMTU: mtu,
            connectionInterval: .microseconds(Int64((intervalMilliseconds * 1_000).rounded())),
            packetsPerEvent: packetsPerEvent, encrypted: encrypted)
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
