import ArgumentParser
import Logging
import MsgPipe
import MsgPipeMQTT

/// `msgpipe listen`: receives messages and writes every one, in order, to standard output, a directory, or
/// JSON lines: as the peripheral (default) serving the GATT service to one central after another, or as the
/// central (`--to`, `--role central`) subscribed to a peripheral that sends.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Receive messages as the peripheral (default) or the central, until interrupted.",
        discussion: """
            As the peripheral: serves the GATT service on --link unix:PATH or advertises --name over \
            Bluetooth, up to --max-centrals centrals at once. As the central (--to NAME|ADDRESS, or --role \
            central): connects to a peripheral that sends, subscribes, and reconnects after a drop.

            Each message is written whole, in order: raw bytes on standard output (--format lines: one line \
            each), a file each with --out-dir DIR, or one JSON line each with --json. Runs until SIGINT/SIGTERM, \
            --connections centrals or --count messages (exit 0).

            msgpipe format: a message is acknowledged only once it is kept (--out-dir: file and journal \
            fsync'd; standard output: written, and fsync'd when a file). A delivery journal in --out-dir (or \
            --state DIR) keeps a restarted listen from writing a resent message twice.

            Examples:
              msgpipe listen --link unix:/tmp/mp.sock > received.bin
              msgpipe listen --name kitchen --out-dir inbox/
              msgpipe listen --to kiosk --format legacy --profile custom:FFF0:FFF2:FFF1 --count 1

            With --mqtt mqtt://[USER[:PASS]@]HOST[:PORT]/PREFIX (peripheral, msgpipe format) each message is \
            published to PREFIX/ID/up (MQTT 5, QoS 1) and acknowledged to its central only after the broker's \
            PUBACK; PREFIX/ID/status says online/offline (retained).

            With --identity FILE --authorized-keys FILE (peripheral) only centrals whose key is in the file are \
            accepted, every message is sealed end to end, and --json names each message's peer_key and \
            peer_name; SIGHUP reloads the file and closes the sessions of removed keys. As the central: \
            --identity FILE --peer-key KEY.

            Exit codes: 0 done or interrupted, 1 link failure, 64 usage error (a bad --mqtt URL too), 69 the \
            broker cannot be reached, 73 --out-dir or --state cannot be written (or is in use), 74 standard output cannot be written, 77 \
            the broker refused the credentials or a publish, or its TLS certificate is not trusted, 78 a key file \
            is missing, unreadable, world-writable or invalid. Reference: docs/CLI.md.
            """)

    @OptionGroup var link: LinkOptions
    @OptionGroup var connection: ConnectionParameterOptions
    @OptionGroup var secure: SecureOptions

    @Option(help: "Wire format: msgpipe, legacy, eom or lines.", transform: parseFrameFormat)
    var format: FrameFormat = .msgpipe

    @Option(name: .customLong("out-dir"), help: "Write each message to a file of its own in this directory.")
    var outDirectory: String?

    @Flag(help: "Write one JSON line per message on standard output.")
    var json = false

    @Option(help: "Keep a delivery journal in this directory, so a restarted listen never writes a resent message twice (standard output and --json; --out-dir keeps its own).")
    var state: String?

    @Option(name: .customLong("max-message-size"), help: "Largest message accepted, in bytes.")
    var maximumMessageSize: Int = 16 << 20

    @Option(help: "Exit after serving this many centrals (peripheral; default: until interrupted).")
    var connections: Int?

    @Option(name: .customLong("max-centrals"), help: "Centrals served at once (peripheral); more wait until one leaves.")
    var maximumCentrals: Int = 8

    @Option(help: "Exit after writing this many messages (default: until interrupted).")
    var count: Int?

    @Option(help: "Without --to/--name: peripheral (default: serve the service) or central (connect and subscribe).")
    var role: LinkRole?

    @Flag(help: "Log connections and Transport events on standard error.")
    var verbose = false

    @Option(help: "Publish every message to this MQTT broker: mqtt://[USER[:PASS]@]HOST[:PORT]/PREFIX or mqtts://...")
    var mqtt: String?

    @Option(help: "The gateway id in the MQTT topics PREFIX/ID/... (default: the host name).")
    var gateway: String?

    @Option(name: .customLong("mqtt-ca"), help: "With an mqtts:// --mqtt: trust the CAs in this PEM file instead of the system's.")
    var mqttCA: String?

    @Option(name: .customLong("metrics-interval"), help: "Seconds between metrics lines on PREFIX/ID/metrics (0: none).")
    var metricsInterval: Int = 60

    func validate() throws {
        if outDirectory != nil && json { throw ValidationError("--out-dir and --json exclude each other") }
        if outDirectory != nil && state != nil {
            throw ValidationError("--out-dir keeps its delivery journal in the directory: not with --state")
        }
        guard (0...Int(UInt32.max - 4)).contains(maximumMessageSize) else {
            throw ValidationError("--max-message-size must be between 0 and \(UInt32.max - 4)")
        }
        if let connections, connections < 1 { throw ValidationError("--connections must be at least 1") }
        guard (1...64).contains(maximumCentrals) else { throw ValidationError("--max-centrals must be 1...64") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        try Self.validateMQTTCA(mqttCA, mqtt: mqtt)
        if mqtt != nil {
            if format != .msgpipe { throw ValidationError("--mqtt needs --format msgpipe (only it acknowledges messages)") }
            if try link.role(role, default: .peripheral) == .central {
                throw ValidationError("--mqtt serves centrals: not with --to or --role central")
            }
            if metricsInterval < 0 { throw ValidationError("--metrics-interval must be 0 or more") }
        } else if gateway != nil {
            throw ValidationError("--gateway names the gateway on --mqtt's broker: give --mqtt too")
        }
        if secure.isEnabled {
            if format != .msgpipe { throw ValidationError("end-to-end keys need --format msgpipe") }
        }
        if link.hasSeveralPeers, secure.isEnabled {
            throw ValidationError("end-to-end keys pin one peer: give --to once with --identity or --key-file")
        }
        if try link.role(role, default: .peripheral) == .central, connections != nil {
            throw ValidationError("--connections counts the centrals a peripheral serves: not with --to or --role central")
        }
    }

    func run() async throws {
        let signals = await ShutdownSignals()
        defer { withExtendedLifetime(signals) {} }
        if try link.role(role, default: .peripheral) == .central {
            return try await receiveAsCentral(signals: signals)
        }
        let keys = try secure.serverKeys()
        await keys?.reloadOnHangup()
        let inbox = try openInbox()
        var options = try receiverOptions(asCentral: false)
        options.keys = keys
        let broker = try await Self.connectGateway(mqtt, gatewayID: gateway, ca: mqttCA, metricsInterval: metricsInterval)
        let acceptor = link.acceptor(options)
        let connections = connections
        // SIGINT/SIGTERM, also one during start: the acceptor stops (the socket file goes, advertising stops),
        // then the run ends. What arrived whole is kept (and accepted); a partial message is dropped.
        let served = await signals.cancellingOnSignal(onSignal: { await acceptor.close() }) { () throws -> (PipeServer, ReceiveEnd) in
            let server = try await PipeServer.serve(acceptor, connections: connections)
            printError(server.description)
            if let broker {
                broker.countRefusedHandshakes(of: server)
                printError("publishing to \(broker.url) as gateway \(broker.gatewayID)")
            }
            SystemdNotify.ready()
            // Each central's messages are kept as they arrive; the centrals interleave message by message.
            // With --mqtt a message is kept (and acknowledged) only once the broker took it.
            let end = await inbox.receive(from: server, onPipe: { central in
                guard central.isSealed else { return }
                printError("\(central.peer) authenticated" + (central.peerKey.map { " as \($0.label)" } ?? ""))
            }, forwarding: broker?.forwarding) { message, central in
                MessageOutput.Item(message, from: central, peer: central.peer)
            }
            return (server, end)
        }
        do {
            let (server, end) = try served.get()
            if case let .forwardFailed(error) = end {
                await server.close()
                await broker?.close()
                printError("\(cli: error)")
                throw ExitCode((error as? MQTTGatewayError).map(Self.exitCode) ?? 1)
            }
            if case .ended = end, let failure = server.failure { throw failure }
            await broker?.close()
            try await finish(end, inbox)
        } catch let error where !(error is ExitCode) {
            await broker?.close()
            printError("\(cli: error)")
            throw ExitCode(1)
        }
    }

    /// Ends a run by `end`: an inbox failure exits at once; otherwise what was handed over is kept first, and
    /// a failure in doing so exits.
    func finish(_ end: ReceiveEnd, _ inbox: MessageInbox<MessageOutput>) async throws {
        if case let .failed(error) = end { try fail(error) }
        await inbox.close()
        if let error = inbox.failure { try fail(error) }
    }

    /// With a broker URL (`--mqtt`): the gateway `gatewayID` (`--gateway`), connected with ``mqttOptions(ca:metricsInterval:)``;
    /// nil without one. A broker failure is printed and exits with its code.
    static func connectGateway(_ url: String?, gatewayID: String?, ca: String?, metricsInterval: Int?) async throws -> MQTTGateway? {
        guard let url else { return nil }
        let options = mqttOptions(ca: ca, metricsInterval: metricsInterval)
        return try await connectBroker { () async throws(MQTTGatewayError) in
            try await MQTTGateway.connect(broker: url, gatewayID: gatewayID, options: options)
        }
    }

    /// The broker options of `listen`, `serve` and `send --mqtt`: `--mqtt-ca`, a metrics line every
    /// `metricsInterval` seconds (0 or nil: none), the client's notes on standard error.
    static func mqttOptions(ca: String?, metricsInterval: Int?) -> MQTTGateway.Options {
        MQTTGateway.Options(trustedCAFile: ca, metricsInterval: metricsInterval.flatMap { $0 > 0 ? .seconds($0) : nil }) {
            printError(FlagWords.flagged("\($0)"))
        }
    }

    /// What `connect` returns; a broker failure is printed and exits with its code.
    static func connectBroker<Broker>(_ connect: () async throws(MQTTGatewayError) -> Broker) async throws -> Broker {
        do throws(MQTTGatewayError) {
            return try await connect()
        } catch {
            printError("\(cli: error)")
            throw ExitCode(exitCode(error))
        }
    }

    /// `--mqtt-ca` goes with an `mqtts://` `--mqtt` and names a readable file (MsgPipeMQTT's check).
    static func validateMQTTCA(_ file: String?, mqtt: String?) throws {
        do throws(MQTTGatewayError) {
            try MQTTGateway.Options(trustedCAFile: file).checkTrustedCAFile(forBroker: mqtt)
        } catch {
            guard case let .badTrustedCAFile(file, reason) = error else { throw ValidationError("--mqtt: \(error)") }
            throw ValidationError("--mqtt-ca \(file): \(reason.replacing("broker URL", with: "--mqtt URL"))")
        }
    }

    /// The exit code for a broker failure (docs/CLI.md): one per ``MQTTGatewayError/Category``.
    static func exitCode(_ error: MQTTGatewayError) -> Int32 {
        switch error.category {
        case .configuration: 64
        case .unavailable: 69
        case .storage: 73
        case .refused: 77
        }
    }

    /// The options of every pipe `listen` receives on, as the peripheral or the central (one `--to` or
    /// several): the link, the connection parameters, the format and limits, and acknowledgements held until a
    /// message is kept (or the broker took it). The central reconnects without limit; the peripheral serves
    /// `--max-centrals` at once. Every path starts from this one value, so no option reaches one peer and not
    /// the others.
    func receiverOptions(asCentral: Bool) throws -> MessagePipe.Options {
        var options = try link.pipeOptions(format: format, verbose: verbose, printReconnects: !asCentral, connection: connection)
        options.logger = CLILogging.logger("listen", verbose: verbose)
        options.maximumMessageSize = maximumMessageSize
        options.onLinkEvent = { event, link in CommandTaps.current.received?(event, link) }
        options.holdsAcknowledgements = true
        if asCentral { options.reconnect.attempts = .max } else { options.maximumCentrals = maximumCentrals }
        return options
    }

    /// The inbox every mode keeps messages through: `--out-dir` (its journal in the directory), or standard
    /// output and `--json` (a journal in `--state DIR`, if given), keeping at most `--count`. Exits 73 when it
    /// cannot open.
    func openInbox() throws -> MessageInbox<MessageOutput> {
        do throws(InboxError) {
            let sink = try MessageOutput(
                json ? .lines(MessageLine.text) : outDirectory.map { .directory($0) } ?? .stream(newline: format == .lines),
                onKept: { CommandTaps.current.kept?($0) })
            var options = MessageInbox<MessageOutput>.Options()
            options.limit = count
            options.logger = CLILogging.logger("listen", verbose: verbose)
            if let state { try MessageDirectory.makeDirectory(state) }
            let inbox = try MessageInbox(output: sink, journalDirectory: sink.directoryPath ?? state, options: options)
            if let note = inbox.recoveryNote { printError(note) }
            return inbox
        } catch {
            try fail(error)
        }
    }

    /// Prints `error` and exits: 74 when standard output cannot be written, else 73 (the directory or journal).
    func fail(_ error: InboxError) throws -> Never {
        printError(error.description)
        if case .io = error, outDirectory == nil { throw ExitCode(74) }
        throw ExitCode(73)
    }

}
