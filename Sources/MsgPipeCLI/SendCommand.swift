import ArgumentParser
import Logging
import MsgPipe

/// `msgpipe send`: sends each FILE (or standard input) as one message: as the central (default, `--to`) to a
/// listener, or as the peripheral (`--name`, `--role peripheral`) to each of `--centrals` subscribed
/// centrals; exits 0 only once every message was acknowledged.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send each FILE (or standard input) as one message, as the central or the peripheral.",
        discussion: """
            As the central (default): --to NAME|ADDRESS over Bluetooth, or --link unix:PATH. As the peripheral: \
            --name NAME (or --role peripheral with --link): waits until --centrals centrals subscribed, then \
            sends to each of them at once.

            --format msgpipe (default): every message is acknowledged, retransmitted and resumed after a drop. \
            legacy, eom and lines are plain framing for other apps: exit 0 means the peer's ATT layer took \
            every packet.

            Examples:
              msgpipe send --to kitchen photo.jpg notes.txt
              msgpipe send --to door --to hall --to lobby firmware.bin     # each peer gets every file
              echo hello | msgpipe send --link unix:/tmp/mp.sock
              msgpipe send --name kiosk --format legacy --profile custom:FFF0:FFF2:FFF1 ticket.json

            \(SendExitCode.help)
            Reference: docs/CLI.md.
            """)

    @OptionGroup var link: LinkOptions
    @OptionGroup var connection: ConnectionParameterOptions
    @OptionGroup var secure: SecureOptions

    @Option(help: "Wire format: msgpipe, legacy, eom or lines.", transform: parseFrameFormat)
    var format: FrameFormat = .msgpipe

    @Option(help: "Without --to/--name: peripheral (serve and send to a subscribing central) or central (default).")
    var role: LinkRole?

    @Option(help: "As the peripheral: wait until this many centrals subscribed, then send to every one.")
    var centrals: Int = 1

    @Option(help: "Seconds until every message must be acknowledged (default: no limit).")
    var timeout: Double?

    @Option(help: "Reconnect attempts in a row after the link drops (msgpipe format).")
    var reconnects: Int = 5

    @Flag(help: "Print one JSON line per acknowledged message on standard output; no progress bar.")
    var json = false

    @Flag(help: "Log connections and Transport events on standard error.")
    var verbose = false

    @Argument(help: "Files to send, one message each ('-' or none: standard input).")
    var files: [String] = []

    @Option(help: ArgumentHelp(
        "Queue the inputs durably in DIR, then deliver everything it holds, oldest first; each leaves DIR once acknowledged. No FILE: deliver what DIR holds.",
        valueName: "DIR"))
    var spool: String?

    @Option(name: .customLong("spool-limit"), help: "With --spool: the most bytes DIR holds; a message that would pass it is not queued (exit 75).")
    var spoolLimit: Int = 256 << 20

    @Flag(name: .customLong("queue-only"), help: "With --spool: queue the inputs and exit without connecting.")
    var queueOnly = false

    @Option(help: "Send what arrives on this MQTT broker's PREFIX/ID/down instead of files, until SIGINT/SIGTERM.")
    var mqtt: String?

    @Option(help: "The gateway id in the MQTT topics PREFIX/ID/... (default: the host name).")
    var gateway: String?

    @Option(help: "With --mqtt: the directory of the downlink journal (messages not yet acknowledged by a central).")
    var state: String?

    @Option(name: .customLong("mqtt-ca"), help: "With an mqtts:// --mqtt: trust the CAs in this PEM file instead of the system's.")
    var mqttCA: String?

    @Option(name: .customLong("metrics-interval"), help: "With --mqtt: seconds between metrics lines on PREFIX/ID/metrics (0: none).")
    var metricsInterval: Int = 60

    func validate() throws {
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be positive") }
        guard reconnects >= 0 else { throw ValidationError("--reconnects must not be negative") }
        if secure.isEnabled {
            if format != .msgpipe { throw ValidationError("end-to-end keys need --format msgpipe") }
        }
        if files.count(where: { $0 == "-" }) > 1 { throw ValidationError("standard input ('-') can be sent once") }
        let asPeripheral = try link.role(role, default: .central) == .peripheral
        guard (1...64).contains(centrals) else { throw ValidationError("--centrals must be 1...64") }
        if centrals != 1 && !asPeripheral { throw ValidationError("--centrals is for the peripheral (--name or --role peripheral)") }
        try ListenCommand.validateMQTTCA(mqttCA, mqtt: mqtt)
        if link.hasSeveralPeers {
            if secure.isEnabled {
                throw ValidationError("end-to-end keys pin one peer (--peer-key): give --to once with --identity or --key-file")
            }
            if mqtt != nil { throw ValidationError("--mqtt sends its downlink to one peer: give --to once") }
        }
        if spool != nil {
            if format != .msgpipe { throw ValidationError("--spool needs --format msgpipe (only it acknowledges messages)") }
            if asPeripheral || link.hasSeveralPeers { throw ValidationError("--spool delivers to one peer: give --to or --link once, as the central") }
            if mqtt != nil { throw ValidationError("--spool and --mqtt are different queues: give one") }
            guard spoolLimit > 0 else { throw ValidationError("--spool-limit must be positive") }
        } else if queueOnly || spoolLimit != 256 << 20 {
            throw ValidationError("--queue-only and --spool-limit go with --spool")
        }
        if mqtt != nil {
            if !files.isEmpty { throw ValidationError("--mqtt sends what arrives from the broker: no FILE arguments") }
            if format != .msgpipe { throw ValidationError("--mqtt needs --format msgpipe (only it acknowledges messages)") }
            if state == nil { throw ValidationError("--mqtt needs --state DIR for its journal") }
            if metricsInterval < 0 { throw ValidationError("--metrics-interval must be 0 or more") }
        } else if gateway != nil || state != nil {
            throw ValidationError("--gateway and --state go with --mqtt")
        }
    }

    func run() async throws {
        if let mqtt, let state { return try await runDownlink(url: mqtt, journal: state) }
        // Every input must open before anything is sent, so a typo does not leave a half-done batch.
        let inputs: InputFiles
        do {
            inputs = try InputFiles(paths: files.isEmpty && spool == nil ? ["-"] : files)
        } catch {
            try fail(error.description, .noInput)
        }
        let sizes = inputs.sizes
        var logger = Logger(label: "msgpipe") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        if let spool { return try await runSpool(spool, inputs: inputs, logger: logger) }
        let copies = link.hasSeveralPeers ? link.bluetooth.peers.count : centrals
        let progress = ProgressReporter(total: sizes.reduce(0, +) * copies, enabled: !json)
        let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        var options = try pipeOptions(logger: logger, progress: progress)
        options.maximumMessageSize = max(options.maximumMessageSize, sizes.max() ?? 0)
        let asPeripheral = try link.role(role, default: .central) == .peripheral
        // Key files are checked before anything connects or advertises.
        options.keys = asPeripheral ? try secure.serverKeys() : try secure.centralKeys()
        await options.keys?.reloadOnHangup()
        let session = SendSession(link: link, options: options, progress: progress, deadline: deadline)
        let peers = asPeripheral ? [] : try link.peerAddresses()
        let centrals = centrals, json = json
        // With --timeout the whole run, connecting included, is bounded: a peer that connects but never answers
        // (or a connect that hangs) ends in exit 2 as well. Each send also checks the deadline itself to report
        // which message was not acknowledged.
        let bounded = await MessagePipe.abandoning(after: deadline.map { $0 + .milliseconds(500) }) {
            if asPeripheral {
                await session.serve(inputs: inputs, centrals: centrals, json: json)
            } else {
                await session.send(inputs, to: peers.count > 1 ? peers : nil, json: json)
            }
        }
        guard let outcome = bounded else {
            try fail("not every message was acknowledged before --timeout", .notAcknowledged)
        }
        progress.finish(complete: outcome == .success)
        if outcome != .success { throw ExitCode(outcome.rawValue) }
    }

    /// The options of `send`'s pipes: the link, connection parameters, format, `--reconnects`; packets sent
    /// and reconnects go to `progress`.
    func pipeOptions(logger: Logger, progress: ProgressReporter) throws -> MessagePipe.Options {
        var options = try link.pipeOptions(format: format, verbose: verbose, connection: connection)
        options.logger = logger
        options.reconnect.attempts = reconnects
        options.onPacketSent = { progress.add($0) }
        options.onNote = { [onNote = options.onNote] note in
            if note.kind == .reconnect { progress.note(FlagWords.flagged(note.description)) } else { onNote(note) }
        }
        return options
    }

    func fail(_ message: String, _ code: SendExitCode) throws -> Never {
        printError(message)
        throw ExitCode(code.rawValue)
    }
}
