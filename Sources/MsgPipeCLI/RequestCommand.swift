import ArgumentParser
import MsgPipe

/// `msgpipe request`: one end-to-end encrypted request to a `msgpipe serve`, its response on stdout.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send one encrypted request to 'msgpipe serve' and print the response.",
        discussion: """
            The request is FILE (or standard input) with an id: --id, or a random one printed to stderr \
            ('request id: ID'). Retrying with the same --id never runs the server's command twice: the \
            server answers from its journal. The response body goes to stdout.

            \(RequestExitCode.helpText)

            Reference: docs/CLI.md.
            """)

    @OptionGroup var link: LinkOptions
    @OptionGroup var secure: SecureOptions

    @Option(help: "The request id (1-64 of A-Z a-z 0-9 . _ : -); reuse it to retry safely.")
    var id: String?

    @Option(help: "Seconds for the whole request: connecting, handshake, the command, the response.")
    var timeout: Double = 30

    @Flag(help: "Print one JSON object (id, status, exitCode, body) instead of the raw response body.")
    var json = false

    @Flag(help: "Log the link, handshake and transport to stderr.")
    var verbose = false

    @Argument(help: "The request body: a file, or - for standard input.")
    var file: String = "-"

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be in (0, 86400] seconds") }
        if let id { _ = try RequestID(id) }
        if link.hasSeveralPeers { throw ValidationError("request goes to one peer: give --to once") }
    }

    func run() async throws {
        let credentials = try secure.credentials()
        let body: [UInt8]
        do throws(FileIOError) {
            body = try InputFile(path: file).readAll(limit: ExchangeLimits().maximumRequestSize)
        } catch {
            guard case let .tooLarge(limit) = error.operation else { throw error }
            throw ValidationError("the request is larger than \(limit) bytes")
        }
        let requestID = try id.map { try RequestID($0) } ?? RequestID.random()
        if id == nil { printError("request id: \(requestID)") }
        // request takes no connection parameters: it opens a short-lived link with the adapter's.
        var options = try link.pipeOptions(format: .msgpipe, verbose: verbose, printReconnects: false, connection: nil)
        options.logger = CLILogging.logger("request", verbose: verbose)
        let timeout = Duration.seconds(timeout)
        let exchange = CommandTaps.current.request
        if exchange == nil { options.keys = .credentials(credentials) }  // a tap runs its own handshake
        let (peer, overBluetooth) = (try link.peerAddress(), (try? link.endpoint()) == .bluetooth)
        let outcome: Result<(ResponseEnvelope, carrier: String?), any Error>
        do {
            outcome = .success(try await MessagePipe.within(timeout, connectingTo: peer, options: options) { pipe in
                let carrier = overBluetooth ? pipe.carrier?.rawValue : nil
                if let exchange, let transport = pipe.transport {
                    return (try await exchange(body, requestID, transport, credentials, timeout), carrier)
                }
                return (try await pipe.request(body, id: requestID, timeout: timeout), carrier)
            })
        } catch {
            outcome = .failure(error)
        }
        try finish(outcome.map(\.0), id: requestID, link: (try? outcome.get())?.carrier)
    }

    private func finish(_ outcome: Result<ResponseEnvelope, any Error>, id: RequestID, link: String?) throws {
        switch outcome {
        case let .success(response):
            let code = RequestExitCode.forStatus(response.status)
            if json {
                BluetoothDiagnostics.emit(JSONLine.text(RequestResultLine(
                    id: id.value, status: response.status.description, exitCode: response.exitCode,
                    body: String(decoding: response.body, as: UTF8.self), exit: code.rawValue, link: link)))
            } else {
                var out = OutputBuffer()
                try out.append(response.body)
                try out.flush()
                if code != .ok {
                    printError("request \(id): \(response.status) (command exit code \(response.exitCode))")
                }
            }
            if code != .ok { throw ExitCode(code.rawValue) }
        case let .failure(error):
            let code = RequestExitCode.forError(error)
            if json {
                let line = RequestFailureLine(id: id.value, error: "\(cli: error)", exit: code.rawValue)
                BluetoothDiagnostics.emit(JSONLine.text(line))
            }
            printError("request \(id): \(cli: error)")
            throw ExitCode(code.rawValue)
        }
    }
}

/// The `request --json` object for an answered request.
struct RequestResultLine: Encodable {
    let id: String
    let status: String
    /// The command's exit status on the server.
    let exitCode: UInt8
    let body: String
    /// This process's exit code.
    let exit: Int32
    /// What carried the request: "gatt" or "l2cap" (absent over a UNIX socket).
    let link: String?
}

/// The `request --json` object for a request that got no answer.
struct RequestFailureLine: Encodable {
    let id: String
    let error: String
    let exit: Int32
}
