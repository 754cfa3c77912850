import ArgumentParser
import MsgPipe
import MsgPipeMQTT

/// `msgpipe serve`: answers encrypted requests by running a command, one at a time, idempotently.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Answer encrypted requests with a command's output, one at a time, idempotently.",
        discussion: """
            Each request's body goes to '/bin/sh -c CMD' on stdin; its stdout is the response (exit 0: ok, \
            otherwise command-failed with its exit code). Requests run one at a time in arrival order. \
            The journal in --state DIR records each request id before the command runs and its response \
            after, both fsync'd: a retried id gets the recorded response and the command never runs twice, \
            also across a kill -9 of serve (a request whose command was running when serve died is answered \
            outcome-unknown, not run again). Up to --max-centrals centrals are served at once: their handshakes and \
            transfers run in parallel, their commands one at a time in arrival order. SIGTERM kills a running command's process group and stops.

            With --mqtt mqtt://[USER[:PASS]@]HOST[:PORT]/PREFIX each request's outcome line (as --json prints \
            it) is published to PREFIX/ID/served (QoS 1); request bodies stay end-to-end encrypted. Exit 64 on \
            a bad URL, 69 when the broker cannot be reached, 77 when it refuses the credentials.

            With --identity FILE --authorized-keys FILE any central whose key is in the file is served; \
            SIGHUP reloads the file and closes the sessions of removed keys. Exit 78 when a key file is \
            missing, unreadable, world-writable or invalid.

            Reference: docs/CLI.md.
            """)

    @OptionGroup var link: LinkOptions
    @OptionGroup var connection: ConnectionParameterOptions
    @OptionGroup var secure: SecureOptions

    @Option(help: "The command run for each request: /bin/sh -c CMD, request on stdin, response on stdout.")
    var exec: String

    @Option(help: "The directory of the idempotency journal (default: a temporary one, lost on restart).")
    var state: String?

    @Option(help: "Seconds a command may run before its process group is killed.")
    var commandTimeout: Double = 60

    @Option(help: "The largest request and response body in bytes.")
    var maxBody: Int = 256 << 10

    @Option(help: "How many answered request ids the journal keeps.")
    var retain: Int = 10_000

    @Option(help: "Seconds a new connection has to complete the secure handshake.")
    var handshakeTimeout: Double = 15

    @Option(help: "Seconds an authenticated connection may stay without a request before it is closed.")
    var idleTimeout: Double = 60

    @Option(help: "Stop after this many connections (default: serve until SIGTERM).")
    var connections: Int?

    @Option(name: .customLong("max-centrals"), help: "Centrals served at once (their commands still run one at a time).")
    var maximumCentrals: Int = 8

    @Flag(help: "Print a JSON line per request handled (and per refused message or failed handshake).")
    var json = false

    @Flag(help: "Log connections, handshakes and requests to stderr.")
    var verbose = false

    @Option(help: "Publish each request's outcome line to this MQTT broker: mqtt://[USER[:PASS]@]HOST[:PORT]/PREFIX.")
    var mqtt: String?

    @Option(help: "The gateway id in the MQTT topic PREFIX/ID/served (default: the host name).")
    var gateway: String?

    @Option(name: .customLong("mqtt-ca"), help: "With an mqtts:// --mqtt: trust the CAs in this PEM file instead of the system's.")
    var mqttCA: String?

    func validate() throws {
        guard commandTimeout > 0 else { throw ValidationError("--command-timeout must be positive") }
        guard handshakeTimeout > 0 else { throw ValidationError("--handshake-timeout must be positive") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive") }
        guard (1...(16 << 20)).contains(maxBody) else { throw ValidationError("--max-body must be 1...16777216") }
        guard retain >= 1 else { throw ValidationError("--retain must be at least 1") }
        guard (1...64).contains(maximumCentrals) else { throw ValidationError("--max-centrals must be 1...64") }
        try ListenCommand.validateMQTTCA(mqttCA, mqtt: mqtt)
        if !link.bluetooth.peers.isEmpty { throw ValidationError("serve is the peripheral: not with --to") }
    }

    func run() async throws {
        let logger = CLILogging.logger("serve", verbose: verbose)
        guard let keys = try secure.serverKeys() else {
            throw ValidationError("give --key-file FILE, or --identity FILE with --peer-key KEY or --authorized-keys FILE")
        }
        await keys.reloadOnHangup()
        let limits = ExchangeLimits(maximumRequestSize: maxBody, maximumResponseSize: maxBody, retainedRequests: retain)
        let requests = try RequestServer(
            stateDirectory: try state ?? Self.temporaryStateDirectory(),
            runner: CommandRunner(command: exec, timeout: .seconds(commandTimeout)), limits: limits, logger: logger)
        if let note = await requests.journalRecoveryNote {
            printError(note)
            if json { ServeEvent.emit(["event": "journal-repaired", "note": note]) }
        }
        let json = json
        // With --mqtt: the broker connection for the outcome lines.
        let broker = try await ListenCommand.connectGateway(mqtt, gatewayID: gateway, ca: mqttCA, metricsInterval: nil)
        var options = try link.pipeOptions(format: .msgpipe, verbose: verbose, connection: connection)
        options.logger = logger
        options.keys = keys
        options.handshakeTimeout = .seconds(handshakeTimeout)
        options.maximumCentrals = maximumCentrals
        options.maximumMessageSize = maxBody + ExchangeLimits.envelopeOverhead
        options.onRefusedHandshake = { peer, error in  // the library warns on stderr
            if json { ServeEvent.emit(["event": "handshake-failed", "peer": peer, "error": "\(cli: error)"]) }
        }
        let acceptor = link.acceptor(options)
        let signalled = try await PipeServer.serveRequestsUntilShutdown(
            acceptor, with: requests, connections: connections, idleTimeout: .seconds(idleTimeout),
            drainTimeout: .seconds(handshakeTimeout), onServing: { printError($0.description) }
        ) { event in
            ServeEvent.report(event, json: json)
            if let broker, case let .handled(request) = event {
                Task { try? await broker.publishServed(request.jsonLine) }
            }
        }
        if signalled { printError("stopped") }
    }

    private static func temporaryStateDirectory() throws -> String {
        let directory: String
        do {
            directory = try MessageDirectory.makeTemporaryDirectory(prefix: "/tmp/msgpipe-serve-")
        } catch {
            throw ValidationError(error.description)
        }
        printError("no --state DIR: the journal is in \(directory) and idempotency does not survive a restart")
        return directory
    }
}

/// The `--json` lines and log lines of `msgpipe serve`.
enum ServeEvent {
    static func report(_ event: RequestServer.Event, json: Bool) {
        switch event {
        case let .handled(request):
            if json { BluetoothDiagnostics.emit(request.jsonLine) }
            if let note = request.note, request.status != .ok { printError("request \(request.id): \(request.status): \(note)") }
        case let .rejected(error):  // the library warns on stderr as it closes the connection
            if json { emit(["event": "rejected", "error": "\(cli: error)"]) }
        }
    }

    /// One JSON object of string fields ("event" and what it needs).
    static func emit(_ fields: [String: String]) {
        BluetoothDiagnostics.emit(JSONLine.text(fields))
    }
}
