import ArgumentParser
import MsgPipe

/// Where the link of `listen`, `send`, `request`, `serve` and `bench` goes (`--link unix:PATH`, or Bluetooth
/// with `--adapter`, `--to`, `--name`, ...) and which GATT service it speaks (`--profile`): parsed here, carried
/// out by the MsgPipe library.
struct LinkOptions: ParsableArguments {
    @Option(help: "unix:PATH: GATT over a UNIX SEQPACKET socket at PATH instead of Bluetooth.")
    var link: String?

    @Option(help: "The GATT service: msgpipe, nus (Nordic UART Service), or custom:SERVICE:WRITE:NOTIFY.")
    var profile: String = "msgpipe"

    @OptionGroup var bluetooth: AdapterOptions

    /// The two kinds of link.
    enum Endpoint: Equatable {
        case unix(path: String)
        case bluetooth
    }

    func validate() throws {
        _ = try endpoint()
        _ = try gattProfile()
    }

    /// `--link unix:PATH`, or `--to unix:PATH` (the first, when given several), is a socket; else Bluetooth.
    func endpoint() throws(ValidationError) -> Endpoint {
        guard let link else {
            if case let .unix(path)? = bluetooth.peers.first, !bluetooth.usesBluetooth { return .unix(path: path) }
            return .bluetooth
        }
        guard case let .unix(path) = PipeAddress(link) else {
            throw ValidationError("--link must be unix:PATH, not '\(link)' (for Bluetooth use --adapter/--to)")
        }
        if bluetooth.usesBluetooth || !bluetooth.peers.isEmpty {
            throw ValidationError("--link unix:PATH and --adapter/--to exclude each other")
        }
        return .unix(path: path)
    }

    /// The peers of a central, each as `MessagePipe.connect(to:)` takes it: `--link unix:PATH`, or every `--to`.
    func peerAddresses() throws -> [String] {
        if link != nil || bluetooth.peers.count <= 1 { return [try peerAddress()] }
        return bluetooth.peers.map(\.description)
    }

    /// True when `--to` names several peers (one central on each at once).
    var hasSeveralPeers: Bool { bluetooth.peers.count > 1 }

    func gattProfile() throws(ValidationError) -> GATTServiceProfile {
        do throws(GATTProfileError) {
            return try GATTServiceProfile.parse(profile)
        } catch {
            throw ValidationError(FlagWords.flagged(error.description))
        }
    }

    /// A short description of the link for diagnostics: "unix:PATH" or "hci0".
    var displayName: String {
        link ?? bluetooth.peers.first(where: \.isSocket)?.description ?? bluetooth.adapter ?? "the default adapter"
    }

    /// "cannot connect to LINK: why". A failed system call (`ATTError.io`) already reads "cannot OPERATION
    /// PLACE: reason" and is printed as it is.
    func connectFailure(_ error: any Error) -> String {
        if case .io? = error as? ATTError { return "\(error)" }
        return "cannot connect to \(displayName): \(cli: error)"
    }

    /// The library's options for these arguments. Advice and warnings are printed; reconnects as
    /// `reconnects` says, details with `verbose`. `connection`: the command's connection parameters, or nil for a
    /// command that takes none; it has no default, so a call site cannot leave them out by accident.
    func pipeOptions(
        format: FrameFormat, verbose: Bool, printReconnects: Bool = true, connection: ConnectionParameterOptions?
    ) throws -> MessagePipe.Options {
        var options = MessagePipe.Options()
        let parameters = try connection?.request()
        if parameters != nil, case .unix = try endpoint() {
            throw ValidationError("--conn-interval, --conn-latency, --supervision-timeout and --phy apply to Bluetooth links, not --link unix:PATH")
        }
        options.adapter = bluetooth.adapter
        options.backend = try bluetooth.pipeBackend(parameters: parameters)
        options.linkMode = bluetooth.linkMode
        options.profile = try gattProfile()
        options.format = format
        options.security = try bluetooth.securityLevel()
        options.connectTimeout = .milliseconds(Int64(bluetooth.connectTimeout * 1000))
        options.onNote = { note in
            switch note.kind {
            case .advice, .warning: printError(FlagWords.flagged(note.description))
            case .reconnect: if printReconnects || verbose { printError(FlagWords.flagged(note.description)) }
            case .detail: if verbose { printError(FlagWords.flagged(note.description)) }
            }
        }
        if verbose {
            options.onPeerParameterUpdate = { peer, parameters in
                printError("\(peer): the peer changed the connection parameters: \(parameters) (its request, accepted "
                    + "by this side's kernel; the controller picks the interval in that range)")
            }
        }
        return options
    }

    /// The peripheral's acceptor: listening on the socket of `--link unix:PATH`, or advertising `--name`.
    func acceptor(_ options: MessagePipe.Options) -> PipeAcceptor {
        PipeAcceptor(at: link.map(PipeAddress.init) ?? .bluetooth(bluetooth.localName), options: options)
    }

    /// The peer `MessagePipe.connect(to:)` takes: `--link unix:PATH`, or the first `--to`.
    func peerAddress() throws -> String {
        guard let peer = link ?? bluetooth.to else { throw ValidationError("a central needs --to ADDRESS or --to NAME") }
        return peer
    }
}
