import MsgPipe
import Synchronization

/// One run of `msgpipe send` over the MsgPipe library: as the central it connects a pipe (which reconnects
/// and resumes on its own); as the peripheral it serves and waits for `centrals` centrals to subscribe. Either
/// way it sends the inputs in order and maps what happened to a ``SendExitCode``.
struct SendSession: Sendable {
    let link: LinkOptions
    let options: MessagePipe.Options
    let progress: ProgressReporter
    let deadline: ContinuousClock.Instant?

    var format: FrameFormat { options.format }

    /// The central: connects to the listener (or any peripheral serving the profile) and sends.
    func run(inputs: SendInputs, json: Bool) async -> SendExitCode {
        await deliver(inputs, to: nil, json: json).code
    }

    /// Several `--to`: connects to every peer at once and sends every input to each, in order, each peer paced
    /// by its own link and reconnecting on its own. A peer that cannot be reached or fails holds back none of
    /// the others. One result line per peer on standard error; `--json` lines carry the peer.
    func fanOut(to peers: [String], inputs: SendInputs, json: Bool) async -> SendExitCode {
        let deliveries = await withTaskGroup(of: (Int, Delivery).self) { group in
            for (index, peer) in peers.enumerated() {
                group.addTask { (index, await deliver(inputs, to: peer, json: json)) }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let total = inputs.paths.count
        for (peer, delivery) in zip(peers, deliveries) {
            printError(delivery.code == .success
                ? "\(peer): \(total) of \(total) messages acknowledged"
                : "\(peer): \(delivery.acknowledged) of \(total) messages acknowledged, then failed (exit code \(delivery.code.rawValue))")
        }
        let code = Self.fanOutCode(deliveries.map(\.code))
        if code == .partialDelivery {
            let missing = zip(peers, deliveries).filter { $0.1.code != .success }.map(\.0)
            printError("partial delivery: \(missing.joined(separator: ", ")) did not acknowledge every message")
        }
        return code
    }

    /// The exit code of a fan-out from each peer's: 0 when every peer succeeded, ``SendExitCode/partialDelivery``
    /// when some did and some did not, the first peer's failure when none succeeded.
    static func fanOutCode(_ codes: [SendExitCode]) -> SendExitCode {
        let failures = codes.filter { $0 != .success }
        guard let first = failures.first else { return .success }
        return failures.count == codes.count ? first : .partialDelivery
    }

    /// What one peer took: its exit code and how many inputs it acknowledged, in order, before any failure.
    struct Delivery: Sendable {
        var code: SendExitCode
        var acknowledged: Int
    }

    /// Connects to `peer` (nil: the one peer of `--link`/`--to`) and sends `inputs` to it.
    private func deliver(_ inputs: SendInputs, to peer: String?, json: Bool) async -> Delivery {
        let name = peer ?? link.displayName
        let pipe: MessagePipe
        do {
            pipe = try await MessagePipe.connect(to: try peer ?? link.peerAddress(), options: options)
            options.note(.detail, "connected to \(pipe.peer)" + (pipe.carrier.map { " over \($0.rawValue)" } ?? ""))
            if case .bluetooth? = try? link.endpoint() { options.note(.detail, "\(pipe.peer): \(pipe.linkParameters)") }
        } catch let error as MessagePipeError {
            printError("cannot send to \(name): \(cli: error)")
            if case .notAuthenticated = error { return Delivery(code: .notAuthenticated, acknowledged: 0) }
            return Delivery(code: .refused, acknowledged: 0)
        } catch let error as SecureError {
            printError("cannot send to \(name): \(cli: error)")
            return Delivery(code: Self.exitCode(error), acknowledged: 0)
        } catch {
            printError(peer.map { "cannot connect to \($0): \(cli: error)" } ?? link.connectFailure(error))
            return Delivery(code: .linkFailure, acknowledged: 0)
        }
        var results = SendResults(inputs: inputs.paths, json: json)
        results.peer = peer
        let outcome = await send(inputs, over: pipe, results: results)
        await pipe.close()
        return outcome
    }

    /// The peripheral: serves, waits until `centrals` centrals subscribed, then sends the inputs to every one
    /// of them at once, each paced by its own link. Success means every central took every message; a central
    /// that fails is named and the exit code is the first failure's.
    func serve(inputs: SendInputs, centrals: Int, json: Bool) async -> SendExitCode {
        var options = options
        options.maximumCentrals = centrals
        options.maximumMessageSize = max(options.maximumMessageSize, inputs.sizes.max() ?? 0)
        // A central that left for longer fails its transfer.
        options.resumeWindow = .seconds(60)
        let server: PipeServer
        do {
            server = try await PipeServer.serve(try link.acceptor(options), waitingFor: centrals)
        } catch {
            printError("cannot serve on \(link.displayName): \(cli: error)")
            return .linkFailure
        }
        printError(server.description)
        var pipes: [MessagePipe] = []
        for await pipe in server.centrals {
            options.note(.detail, "central \(pipe.peer) subscribed")
            pipes.append(pipe)
            if pipes.count == centrals { break }
        }
        guard pipes.count == centrals else {
            if let failure = server.failure {
                printError("cannot serve on \(link.displayName): \(failure)")
            } else {
                printError("\(pipes.count) of \(centrals) centrals subscribed")
            }
            await server.close()
            return .linkFailure
        }
        let codes = await withTaskGroup(of: SendExitCode.self) { group in
            for pipe in pipes {
                group.addTask {
                    var results = SendResults(inputs: inputs.paths, json: json)
                    results.peer = pipe.peer
                    let code = await send(inputs, over: pipe, results: results).code
                    if code != .success { printError("central \(pipe.peer) failed (exit code \(code.rawValue))") }
                    return code
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        await server.close()
        return codes.first { $0 != .success } ?? .success
    }

    /// Sends `inputs` in order over `pipe` (the library's windowed send) and returns this peer's exit code and
    /// how many it acknowledged. One call per peer: several may share `inputs` (standard input is read once).
    func send(_ inputs: SendInputs, over pipe: MessagePipe, results: SendResults) async -> Delivery {
        let outcome = await pipe.send(count: inputs.paths.count, deadline: deadline, body: inputs.body) { index, bytes, elapsed in
            results.acknowledged(
                index, bytes: bytes, elapsed: elapsed, link: carrier(pipe),
                parameters: LinkParameterFields(carrier(pipe) == nil ? nil : pipe.linkParameters))
        }
        switch outcome.failure {
        case nil:
            return Delivery(code: .success, acknowledged: outcome.acknowledged)
        case let .body(_, error)?:
            printError("\(error)")
            return Delivery(code: .ioError, acknowledged: outcome.acknowledged)
        case let .send(index, error)?:
            printError((results.peer.map { "\($0): " } ?? "") + "\(Self.name(inputs.paths[index])): \(cli: error)")
            return Delivery(code: Self.exitCode(error), acknowledged: outcome.acknowledged)
        }
    }

    /// What carries `pipe`'s data ("gatt" or "l2cap") as central over Bluetooth; nil elsewhere.
    func carrier(_ pipe: MessagePipe) -> String? {
        guard case .bluetooth? = try? link.endpoint() else { return nil }
        return pipe.carrier?.rawValue
    }

    /// The exit code for a failed send.
    static func exitCode(_ error: any Error) -> SendExitCode {
        switch error {
        case let error as TransportError: SendExitCode(error)
        case SecureError.notAuthenticated, SecureError.modeMismatch, SecureError.refusedByPeer(.notAuthenticated),
            SecureError.refusedByPeer(.modeMismatch):
            .notAuthenticated
        case SecureError.closedDuringHandshake: .linkFailure
        case is SecureError: .refused
        case MessagePipeError.notAuthenticated: .notAuthenticated
        case MessagePipeError.messageTooLarge, MessagePipeError.formatMismatch, MessagePipeError.keysUnusable: .refused
        case MessagePipeError.timedOut: .notAcknowledged
        case is FramingError: .dataError
        default: .linkFailure
        }
    }

    static func name(_ path: String) -> String { path == "-" ? "standard input" : path }
}

/// The per-message report of `send --json`: one line per acknowledged message on standard output.
struct SendResults {
    let inputs: [String]
    let json: Bool
    /// The central a peripheral sent to (`send --name`: one line per central per message), or the `--to` of
    /// one of several peers.
    var peer: String? = nil

    /// `link`: what carried the message ("gatt" or "l2cap"), if this side knows.
    func acknowledged(
        _ index: Int, bytes: Int, elapsed: Duration, link: String?,
        parameters: LinkParameterFields = LinkParameterFields(nil)
    ) {
        guard json else { return }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let line = Line(
            index: index + 1, file: SendSession.name(inputs[index]), bytes: bytes,
            seconds: JSONLine.rounded(seconds, decimals: 2) ?? 0, peer: peer, link: link,
            intervalMilliseconds: parameters.intervalMilliseconds, latency: parameters.latency,
            supervisionTimeoutMilliseconds: parameters.supervisionTimeoutMilliseconds,
            changedByPeer: parameters.changedByPeer, phy: parameters.phy, mtu: parameters.mtu)
        BluetoothDiagnostics.emit(JSONLine.text(line))
    }

    /// One `send --json` line.
    struct Line: Encodable {
        let index: Int
        let file: String
        let bytes: Int
        let seconds: Double
        /// The central's address (as peripheral), or the `--to` it went to (several `--to`); absent otherwise.
        let peer: String?
        /// What carried it: "gatt" or "l2cap" (as central; absent where unknown).
        let link: String?
        /// As a Bluetooth central (``LinkParameterFields``): the requested interval range, latency and timeout,
        /// the PHY and the MTU; each absent where unknown.
        var intervalMilliseconds: [Double]? = nil
        var latency: Int? = nil
        var supervisionTimeoutMilliseconds: Int? = nil
        var changedByPeer: Bool? = nil
        var phy: String? = nil
        var mtu: Int? = nil

        enum CodingKeys: String, CodingKey {
            case index, file, bytes, seconds, peer, link, latency, phy, mtu
            case intervalMilliseconds = "interval_ms"
            case supervisionTimeoutMilliseconds = "supervision_timeout_ms"
            case changedByPeer = "changed_by_peer"
        }
    }
}

/// `send`'s inputs, each FILE (or '-': standard input) one message, read when it is sent: a file from disk
/// each time, standard input once and kept, so one set of inputs can be sent to several peers.
final class SendInputs: Sendable {
    let paths: [String]
    /// The sizes known before sending (regular files; 0 for standard input or a pipe).
    let sizes: [Int]
    private let standardInput = Mutex<Result<[UInt8], FileIOError>?>(nil)

    init(paths: [String], sizes: [Int]) {
        self.paths = paths
        self.sizes = sizes
    }

    /// The body of input `index`.
    func body(_ index: Int) throws(FileIOError) -> [UInt8] {
        let path = paths[index]
        guard path == "-" else { return try SendInput.read(path) }
        let result = standardInput.withLock { cached in
            if let cached { return cached }
            let read = Result { () throws(FileIOError) in try SendInput.read(path) }
            cached = read
            return read
        }
        return try result.get()
    }
}
