import MsgPipe

/// One run of `msgpipe send` over the MsgPipe library: as the central it sends through pipes that reconnect
/// and resume on their own (`MessagePipe.send(count:toEach:...)`); as the peripheral it serves and sends to each
/// of `centrals` centrals (`PipeServer.send(count:toCentrals:...)`). It prints what happened and maps the
/// outcome to a ``SendExitCode``.
struct SendSession: Sendable {
    let link: LinkOptions
    let options: MessagePipe.Options
    let progress: ProgressReporter
    let deadline: ContinuousClock.Instant?

    var format: FrameFormat { options.format }

    /// The central: connects to `peers` (nil: the one peer of `--link`/`--to`) and sends every input to each,
    /// in order. Several `--to`: one result line per peer on standard error, `--json` lines carry the peer, and
    /// the exit code is 0, ``SendExitCode/partialDelivery`` when some peers took every input and some did not,
    /// else the first peer's failure.
    func send(_ inputs: InputFiles, to peers: [String]?, json: Bool) async -> SendExitCode {
        let addresses: [String]
        do {
            addresses = try peers ?? [link.peerAddress()]
        } catch {
            printError(link.connectFailure(error))
            return .linkFailure
        }
        let bluetooth = (try? link.endpoint()) == .bluetooth
        let outcome = await MessagePipe.send(
            count: inputs.paths.count, toEach: addresses, options: options, deadline: deadline,
            body: { try inputs.body($0) },
            onConnected: { [options] _, pipe in
                options.note(.detail, "connected to \(pipe.peer)" + (pipe.carrier.map { " over \($0.rawValue)" } ?? ""))
                if bluetooth { options.note(.detail, "\(pipe.peer): \(pipe.linkParameters)") }
            },
            onAcknowledged: { peer, pipe, index, bytes, elapsed in
                acknowledged(index, of: inputs, by: pipe, as: peers == nil ? nil : peer, json: json, bytes: bytes, elapsed: elapsed)
            })
        let codes = outcome.deliveries.map { report($0, of: inputs, peer: peers == nil ? nil : $0.peer) }
        guard peers != nil else { return codes[0] }
        let total = inputs.paths.count
        for (delivery, code) in zip(outcome.deliveries, codes) {
            printError(code == .success
                ? "\(delivery.peer): \(total) of \(total) messages acknowledged"
                : "\(delivery.peer): \(delivery.acknowledged) of \(total) messages acknowledged, then failed (exit code \(code.rawValue))")
        }
        if outcome.isPartial {
            printError("partial delivery: \(outcome.failed.map(\.peer).joined(separator: ", ")) did not acknowledge every message")
        }
        // None succeeded: the first peer's failure.
        return outcome.isComplete ? .success : outcome.isPartial ? .partialDelivery : codes[0]
    }

    /// The peripheral: serves, waits until `centrals` centrals subscribed, then sends the inputs to every one
    /// of them at once, each paced by its own link. Success means every central took every message; a central
    /// that fails is named and the exit code is the first failure's.
    func serve(inputs: InputFiles, centrals: Int, json: Bool) async -> SendExitCode {
        var options = options
        options.maximumCentrals = centrals
        // A central that left for longer fails its transfer.
        options.resumeWindow = .seconds(60)
        let outcome: DeliveryOutcome
        do throws(CentralsError) {
            outcome = try await PipeServer.send(
                count: inputs.paths.count, toCentrals: centrals, through: link.acceptor(options), deadline: deadline,
                body: { try inputs.body($0) }, onServing: { printError($0.description) }
            ) { pipe, index, bytes, elapsed in
                acknowledged(index, of: inputs, by: pipe, as: pipe.peer, json: json, bytes: bytes, elapsed: elapsed)
            }
        } catch {
            if case let .serverFailed(failure) = error { printError("cannot serve on \(link.displayName): \(cli: failure)") } else { printError("\(error)") }
            return .linkFailure
        }
        let codes = outcome.deliveries.map { delivery in
            let code = report(delivery, of: inputs, peer: delivery.peer)
            if code != .success { printError("central \(delivery.peer) failed (exit code \(code.rawValue))") }
            return code
        }
        return codes.first { $0 != .success } ?? .success
    }

    /// Prints why `delivery` stopped, if it did, and returns its exit code (MsgPipe's kind of the failure).
    /// `peer`: the peer to name (nil: the one of `--link`/`--to`).
    private func report(_ delivery: PeerDelivery, of inputs: InputFiles, peer: String?) -> SendExitCode {
        guard let failure = delivery.failure else { return .success }
        switch failure {
        case let .connect(error) where error is MessagePipeError || error is SecureError:
            printError("cannot send to \(peer ?? link.displayName): \(cli: error)")
        case let .connect(error):
            printError(peer.map { "cannot connect to \($0): \(cli: error)" } ?? link.connectFailure(error))
        case let .send(.body(_, error)):
            printError("\(error)")
        case let .send(.send(index, error)):
            printError((peer.map { "\($0): " } ?? "") + "\(Self.name(inputs.paths[index])): \(cli: error)")
        }
        return SendExitCode(failure.kind)
    }

    /// `--json`: the line of input `index`, acknowledged by `pipe`'s peer (`peer`: the name the line carries).
    private func acknowledged(
        _ index: Int, of inputs: InputFiles, by pipe: MessagePipe, as peer: String?, json: Bool, bytes: Int, elapsed: Duration
    ) {
        guard json else { return }
        let carrier = carrier(pipe)
        BluetoothDiagnostics.emit(JSONLine.text(
            SendResults.Line(
                index: index + 1, file: Self.name(inputs.paths[index]), bytes: bytes, seconds: JSONLine.seconds(elapsed),
                peer: peer, link: carrier),
            adding: LinkParameterFields(carrier == nil ? nil : pipe.linkParameters)))
    }

    /// What carries `pipe`'s data ("gatt" or "l2cap") as central over Bluetooth; nil elsewhere.
    func carrier(_ pipe: MessagePipe) -> String? {
        guard case .bluetooth? = try? link.endpoint() else { return nil }
        return pipe.carrier?.rawValue
    }

    static func name(_ path: String) -> String { path == "-" ? "standard input" : path }
}

/// The per-message report of `send --json`: one line per acknowledged message on standard output.
enum SendResults {
    /// One `send --json` line; ``LinkParameterFields`` adds what the link runs on.
    struct Line: Encodable {
        let index: Int
        let file: String
        let bytes: Int
        let seconds: Double
        /// The central's address (as peripheral), or the `--to` it went to (several `--to`); absent otherwise.
        let peer: String?
        /// What carried it: "gatt" or "l2cap" (as central; absent where unknown).
        let link: String?
    }
}
